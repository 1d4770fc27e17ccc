// ping_pong: a pinger and a ponger goroutine exchange messages/2 round trips
// over two unbuffered channels (one per direction); each side checks that the
// sequence numbers arrive in order. As our kernel, in two phases: the
// throughput phase (elapsed_ns) has no clock read inside; then the latency
// phase times latency_samples more round trips one by one for the percentiles.
//
// Protocol: stdin {"kernel":"ping_pong","params":{"messages","latency_samples","threads"}};
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

// ponger answers each ping with a pong of the same seq; the first roundTrips
// pings are the throughput phase's, the rest the latency phase's. It reports
// each phase's count and out-of-order pings on done.
func ponger(roundTrips, probes int64, ping <-chan msg, pong chan<- msg, done chan<- [4]int64) {
	var received, outOfOrder, probed, probesOutOfOrder int64
	for received < roundTrips {
		m := <-ping
		if m.seq != received {
			outOfOrder++
		}
		received++
		pong <- msg{m.seq}
	}
	for probed < probes {
		m := <-ping
		if m.seq != roundTrips+probed {
			probesOutOfOrder++
		}
		probed++
		pong <- msg{m.seq}
	}
	done <- [4]int64{received, outOfOrder, probed, probesOutOfOrder}
}

// clockReadNs is what one clock read costs here: each timed round trip
// includes about one.
func clockReadNs() float64 {
	const reads = 1000
	first := time.Now()
	last := first
	for i := 0; i < reads; i++ {
		last = time.Now()
	}
	return float64(last.Sub(first).Nanoseconds()) / reads
}

func pingPong(messages, probes int64) result {
	roundTrips := messages / 2
	samples := make([]int64, 0, probes)
	ping, pong := make(chan msg), make(chan msg)
	done := make(chan [4]int64, 1)
	go ponger(roundTrips, probes, ping, pong, done)

	// The main goroutine is the pinger. The throughput phase: no clock read
	// inside.
	var pongs, outOfOrder int64
	start := time.Now()
	for k := int64(0); k < roundTrips; k++ {
		ping <- msg{k}
		if m := <-pong; m.seq != pongs {
			outOfOrder++
		}
		pongs++
	}
	elapsed := time.Since(start).Nanoseconds()

	// The latency phase.
	clockRead := 0.0
	if probes > 0 {
		clockRead = clockReadNs()
	}
	var probed, probesOutOfOrder int64
	for k := int64(0); k < probes; k++ {
		sent := time.Now()
		ping <- msg{roundTrips + k}
		m := <-pong
		samples = append(samples, time.Since(sent).Nanoseconds())
		if m.seq != roundTrips+probed {
			probesOutOfOrder++
		}
		probed++
	}

	pr := <-done
	pings := pr[0]
	// A probe out of order is a wrong answer too (each loop counts its own
	// probes, so their counts cannot differ).
	outOfOrder += pr[1] + pr[3] + probesOutOfOrder
	sortInt64s(samples)
	// A figure that was not measured is left out, never 0 (labctl would store a 0 ns
	// latency and compare it): the percentiles and the clock's cost need probes.
	metrics := map[string]float64{"round_trip_samples": float64(len(samples))}
	if roundTrips > 0 {
		metrics["round_trip_mean_ns"] = float64(elapsed) / float64(roundTrips)
	}
	if len(samples) > 0 {
		metrics["round_trip_p50_ns"] = float64(percentile(samples, 0.50))
		metrics["round_trip_p99_ns"] = float64(percentile(samples, 0.99))
		metrics["round_trip_max_ns"] = float64(percentile(samples, 1.0))
		metrics["clock_read_ns"] = clockRead
	}
	return result{
		ElapsedNs: elapsed,
		Messages:  pings + pongs,
		Answer:    fmt.Sprintf("pings=%d pongs=%d out_of_order=%d corrupt=0", pings, pongs, outOfOrder),
		Metrics:   metrics,
	}
}
