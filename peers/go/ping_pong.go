// ping_pong: a pinger and a ponger goroutine exchange messages/2 round trips
// over two unbuffered channels (one per direction); each side checks that the
// sequence numbers arrive in order. Measures round-trip latency/throughput.
//
// Protocol: stdin {"kernel":"ping_pong","params":{"messages","threads"}};
// stdout {"elapsed_ns","messages","answer":"pings=.. pongs=.. out_of_order=.. corrupt=0","metrics"}.
package main

import (
	"fmt"
	"time"
)

// msg is a ping or a pong, passed by value.
type msg struct {
	seq int64
}

// ponger answers each ping with a pong of the same seq, then reports how
// many pings it received and how many were out of order on done.
func ponger(roundTrips int64, ping <-chan msg, pong chan<- msg, done chan<- [2]int64) {
	var received, outOfOrder int64
	for received < roundTrips {
		m := <-ping
		if m.seq != received {
			outOfOrder++
		}
		received++
		pong <- msg{m.seq}
	}
	done <- [2]int64{received, outOfOrder}
}

func pingPong(messages int64) result {
	roundTrips := messages / 2
	stride := roundTrips / 100000
	if stride < 1 {
		stride = 1
	}
	samples := make([]int64, 0, roundTrips/stride+1)
	ping, pong := make(chan msg), make(chan msg)
	done := make(chan [2]int64, 1)
	go ponger(roundTrips, ping, pong, done)

	// The main goroutine is the pinger.
	var pongs, outOfOrder int64
	start := time.Now()
	for k := int64(0); k < roundTrips; k++ {
		if k%stride == 0 {
			sent := time.Now()
			ping <- msg{k}
			m := <-pong
			samples = append(samples, time.Since(sent).Nanoseconds())
			if m.seq != pongs {
				outOfOrder++
			}
		} else {
			ping <- msg{k}
			if m := <-pong; m.seq != pongs {
				outOfOrder++
			}
		}
		pongs++
	}
	elapsed := time.Since(start).Nanoseconds()

	pr := <-done
	pings := pr[0]
	outOfOrder += pr[1]
	sortInt64s(samples)
	return result{
		ElapsedNs: elapsed,
		Messages:  pings + pongs,
		Answer:    fmt.Sprintf("pings=%d pongs=%d out_of_order=%d corrupt=0", pings, pongs, outOfOrder),
		Metrics: map[string]float64{
			"round_trip_p50_ns":  float64(percentile(samples, 0.50)),
			"round_trip_p99_ns":  float64(percentile(samples, 0.99)),
			"round_trip_max_ns":  float64(percentile(samples, 1.0)),
			"round_trip_samples": float64(len(samples)),
		},
	}
}
