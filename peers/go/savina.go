// Savina's micro benchmarks 1 and 2 (savina_pingpong, savina_count) on goroutines: each actor is
// a goroutine that owns its mailbox, a channel of messages it receives one at a time in a type
// switch; whoever sends to it holds the channel. Savina's Akka actors have unbounded mailboxes;
// a Go channel has a capacity (mailboxCapacity), past which a sender waits: in savina_count the
// producer, sending its N Increments in one handler, waits whenever the counter is that far
// behind, where Akka's producer never waits. The messages are Savina's, the counts and the answer
// our kernels' (native/kernels/savina/pingpong.hpp, count.hpp), checked by labctl.
//
// Measured phase (elapsed_ns), as ours: the two actors made (their mailboxes and goroutines) and
// started, the first message, and every message until the last handled (pong's Stop; the
// producer's Result). Differences from Savina, as ours declare: Go's scheduler and its threads
// exist before the clock starts, where Savina's runIteration creates the actor system inside it;
// Savina reports statistics over 12 iterations in one JVM, where each run here is one sample.
package main

import (
	"fmt"
	"time"
)

// mailboxCapacity is each actor's channel buffer.
const mailboxCapacity = 1024

type message interface{}

// savina_pingpong's messages (Savina's PingPongConfig): SendPing and SendPong carry the sender's
// mailbox, as Akka's carry the sender's ActorRef.
type (
	startMsg    struct{}
	pingMsg     struct{} // ping's note to itself to send the next ping
	sendPingMsg struct{ sender chan<- message }
	sendPongMsg struct{ sender chan<- message }
	stopMsg     struct{}
)

// pingPongTally: what each actor counted, each its own fields (pingpong.hpp's Tally).
type pingPongTally struct {
	start, ping, sendPing, sendPong, stop int64
	pingsLeft                             int64
}

func pingActor(pings int64, self chan message, pong chan<- message, tally *pingPongTally) {
	left := pings
	sendPing := func() {
		pong <- sendPingMsg{self}
		left--
	}
	for m := range self {
		switch m.(type) {
		case startMsg:
			tally.start++
			sendPing()
		case pingMsg:
			tally.ping++
			sendPing()
		case sendPongMsg:
			tally.sendPong++
			if left > 0 {
				self <- pingMsg{}
			} else {
				tally.pingsLeft = left
				pong <- stopMsg{}
				return // Savina's ping exits after its Stop
			}
		}
	}
}

func pongActor(self chan message, tally *pingPongTally, done chan<- struct{}) {
	for m := range self {
		switch m := m.(type) {
		case sendPingMsg:
			tally.sendPing++
			m.sender <- sendPongMsg{self}
		case stopMsg:
			tally.stop++
			close(done) // Savina's pong exits here, the last of the two: the benchmark's end
			return
		}
	}
}

func savinaPingPong(pings int64) result {
	var tally pingPongTally
	done := make(chan struct{})
	start := time.Now()
	pong := make(chan message, mailboxCapacity)
	go pongActor(pong, &tally, done)
	ping := make(chan message, mailboxCapacity)
	go pingActor(pings, ping, pong, &tally)
	ping <- startMsg{}
	<-done
	elapsed := time.Since(start).Nanoseconds()
	t := tally // every write happened before the Stop, which happened before done
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  t.start + t.ping + t.sendPing + t.sendPong + t.stop,
		Answer: fmt.Sprintf("start=%d ping=%d send_ping=%d send_pong=%d stop=%d pings_left=%d",
			t.start, t.ping, t.sendPing, t.sendPong, t.stop, t.pingsLeft),
	}
}

// savina_count's messages (Savina's CountingConfig): Retrieve carries the producer's mailbox.
type (
	incrementMsg struct{}
	retrieveMsg  struct{ sender chan<- message }
	resultMsg    struct{ result int64 }
)

// countTally: the producer counts its start and the Result, the counter the Increments and the
// Retrieve (count.hpp's Tally).
type countTally struct {
	start, increments, retrieves, results, result int64
}

func counterActor(self chan message, tally *countTally) {
	var count int64
	for m := range self {
		switch m := m.(type) {
		case incrementMsg:
			count++
			tally.increments++
		case retrieveMsg:
			tally.retrieves++
			m.sender <- resultMsg{count}
			return
		}
	}
}

func producerActor(increments int64, self chan message, counter chan<- message, tally *countTally,
	done chan<- struct{}) {
	for m := range self {
		switch m := m.(type) {
		case incrementMsg: // the start: N Increments, then a Retrieve, in one handler
			tally.start++
			for i := int64(0); i < increments; i++ {
				counter <- incrementMsg{}
			}
			counter <- retrieveMsg{self}
		case resultMsg:
			tally.results++
			tally.result = m.result
			close(done)
			return
		}
	}
}

func savinaCount(increments int64) result {
	var tally countTally
	done := make(chan struct{})
	start := time.Now()
	counter := make(chan message, mailboxCapacity)
	go counterActor(counter, &tally)
	producer := make(chan message, mailboxCapacity)
	go producerActor(increments, producer, counter, &tally, done)
	producer <- incrementMsg{}
	<-done
	elapsed := time.Since(start).Nanoseconds()
	t := tally
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  t.start + t.increments + t.retrieves + t.results,
		Answer: fmt.Sprintf("start=%d increments=%d retrieves=%d results=%d result=%d",
			t.start, t.increments, t.retrieves, t.results, t.result),
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
