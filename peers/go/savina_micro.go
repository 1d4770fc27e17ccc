// Savina's micro benchmarks 3-7 (savina_fjthrput, savina_fjcreate, savina_threadring,
// savina_chameneos, savina_big) on goroutines, in savina.go's idiom: each actor is a goroutine
// owning its mailbox channel, receiving one message at a time in a type switch. The messages are
// Savina's, the counts and the answers our kernels' (native/kernels/savina/<name>.hpp), checked by
// labctl. Each measured phase starts where ours does (the actors' making) and ends with the last
// message handled. Differences from Savina beyond savina.go's (bounded mailboxes, the scheduler
// made before the clock, one sample per run) are told at each kernel.
package main

// #cgo LDFLAGS: -lm
// #include <math.h>
import "C"

import (
	"fmt"
	"strconv"
	"time"
)

// formatSum prints a float64 as C's "%.17g" does (our answers' format).
func formatSum(x float64) string { return strconv.FormatFloat(x, 'g', 17, 64) }

// ---- savina_fjthrput and savina_fjcreate: Savina's job ----

// fjTheta is the angle each job message carries (Savina's performComputation(37.2)).
const fjTheta = 37.2

// fjJob is Savina's job, the square of a sine, computed by C's sin (through cgo) as ours is:
// Go's math.Sin(37.2) is one ulp from glibc's, so its results would never sum to our answer to
// the last digit. Each job pays a cgo call's cost besides (not measured apart here).
func fjJob(theta float64) float64 {
	s := float64(C.sin(C.double(theta)))
	return s * s
}

// repeatedSum adds value count times from zero, as a worker adds its results.
func repeatedSum(value float64, count int64) float64 {
	sum := 0.0
	for i := int64(0); i < count; i++ {
		sum += value
	}
	return sum
}

type (
	fjJobMsg   struct{ theta float64 }
	fjTallyMsg struct {
		worker    int
		jobs, bad int64
		sum       float64
	}
)

// savina_fjthrput: the main goroutine (Savina's main thread) makes `actors` workers and a sink,
// then sends `messages` rounds of one job to each worker in turn. A worker reports its tally to
// the sink after its `messages` jobs; the sink adds the workers' sums in the workers' order.
// Differences as ours (a sink, the angle in the message, results summed); the main goroutine waits
// where a worker's mailbox is full, where Akka's sender never waits.
func fjThrputWorker(index int, messages int64, self <-chan message, sink chan<- message) {
	var jobs, bad int64
	sum := 0.0
	for m := range self {
		r := fjJob(m.(fjJobMsg).theta)
		if !(r > 0) {
			bad++
		}
		sum += r
		jobs++
		if jobs == messages {
			sink <- fjTallyMsg{index, jobs, bad, sum}
			return // Savina's worker exits after its last job
		}
	}
}

func savinaFjThrput(messages, actors int64) result {
	done := make(chan string)
	var jobs, finished int64
	start := time.Now()
	sink := make(chan message, mailboxCapacity)
	go func() {
		sums := make([]float64, actors)
		var bad int64
		for m := range sink {
			t := m.(fjTallyMsg)
			finished++
			jobs += t.jobs
			bad += t.bad
			sums[t.worker] = t.sum
			if finished == actors {
				total := 0.0
				for _, s := range sums {
					total += s
				}
				done <- fmt.Sprintf("jobs=%d workers_done=%d bad_results=%d result_sum=%s",
					jobs, finished, bad, formatSum(total))
				return
			}
		}
	}()
	workers := make([]chan message, actors)
	for i := range workers {
		workers[i] = make(chan message, mailboxCapacity)
		go fjThrputWorker(i, messages, workers[i], sink)
	}
	for m := int64(0); m < messages; m++ {
		for _, w := range workers {
			w <- fjJobMsg{fjTheta}
		}
	}
	answer := <-done
	elapsed := time.Since(start).Nanoseconds()
	return result{ElapsedNs: max64(elapsed, 1), Messages: jobs + finished, Answer: answer}
}

type fjDoneMsg struct {
	worker int
	result float64
}

// savina_fjcreate: the main goroutine makes each worker (a goroutine and its mailbox) and sends it
// one job; the worker does it, reports the result to the sink and exits. As ours: a sink counts
// the reports (Savina's workers only exit), results summed, the angle in the message; the sink's
// goroutine is made before the clock starts, as ours starts its sink before the phase.
func savinaFjCreate(workers int64) result {
	done := make(chan string)
	var reports int64
	sink := make(chan message, mailboxCapacity)
	go func() {
		seen := make([]bool, workers)
		var repeated, bad int64
		sum := 0.0
		for m := range sink {
			d := m.(fjDoneMsg)
			reports++
			if seen[d.worker] {
				repeated++
			}
			seen[d.worker] = true
			if !(d.result > 0) {
				bad++
			}
			sum += d.result
			if reports == workers {
				done <- fmt.Sprintf("workers_done=%d repeated=%d bad_results=%d result_sum=%s",
					reports, repeated, bad, formatSum(sum))
				return
			}
		}
	}()
	start := time.Now()
	for i := int64(0); i < workers; i++ {
		mailbox := make(chan message, 1) // its one message
		go func(index int, self <-chan message) {
			job := (<-self).(fjJobMsg)
			sink <- fjDoneMsg{index, fjJob(job.theta)}
		}(int(i), mailbox)
		mailbox <- fjJobMsg{fjTheta}
	}
	answer := <-done
	elapsed := time.Since(start).Nanoseconds()
	return result{ElapsedNs: max64(elapsed, 1), Messages: 2 * reports, Answer: answer}
}

// ---- savina_threadring ----

type (
	trDataMsg struct{ next chan<- message }
	trPingMsg struct{ left int64 }
	trExitMsg struct{ left int64 }
)

type trCounts struct{ data, pings, exits, deadLetters, lastPing int64 }

// trMember is Savina's ThreadRingActor: Data sets its next member, a Ping is passed on counted
// down until Ping(0) starts the Exits, each member exits on its Exit and passes it on counted
// down. The Exit(0) then reaches the first member to have exited: Akka's dead letter, which its
// goroutine stays to take (it alone knows it is first: its Exit carried `actors`), the run's end.
func trMember(actors int64, self chan message, counts *trCounts, done chan<- struct{}) {
	var next chan<- message
	exited := false
	for m := range self {
		switch m := m.(type) {
		case trDataMsg:
			counts.data++
			next = m.next
		case trPingMsg:
			counts.pings++
			if m.left > 0 {
				next <- trPingMsg{m.left - 1}
			} else {
				counts.lastPing++
				next <- trExitMsg{actors}
			}
		case trExitMsg:
			if exited {
				counts.deadLetters++
				close(done)
				return
			}
			exited = true
			counts.exits++
			first := m.left == actors
			if m.left > 0 {
				next <- trExitMsg{m.left - 1}
			}
			if !first {
				return
			}
		}
	}
}

func savinaThreadRing(actors, pings int64) result {
	counts := make([]trCounts, actors)
	done := make(chan struct{})
	start := time.Now()
	members := make([]chan message, actors)
	for i := range members {
		members[i] = make(chan message, 4) // Data, and at most one Ping or Exit at a time
		go trMember(actors, members[i], &counts[i], done)
	}
	for i := range members {
		members[i] <- trDataMsg{members[(i+1)%len(members)]}
	}
	members[0] <- trPingMsg{pings}
	<-done
	elapsed := time.Since(start).Nanoseconds()
	// As threadring.hpp's collect: the totals, who got Ping(0), the members off their share.
	var total trCounts
	lastAt, uneven := int64(-1), 0
	stops := pings + 1
	for i, c := range counts { // every write happened before the dead letter closed done
		total.data += c.data
		total.pings += c.pings
		total.exits += c.exits
		total.deadLetters += c.deadLetters
		total.lastPing += c.lastPing
		if c.lastPing != 0 {
			lastAt = int64(i)
		}
		share := stops / actors
		if int64(i) < stops%actors {
			share++
		}
		want := trCounts{data: 1, pings: share, exits: 1}
		if int64(i) == (pings+1)%actors {
			want.deadLetters = 1
		}
		if int64(i) == pings%actors {
			want.lastPing = 1
		}
		if c != want {
			uneven++
		}
	}
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  total.data + total.pings + total.exits + total.deadLetters,
		Answer: fmt.Sprintf("data=%d pings=%d exits=%d dead_letters=%d last_ping_at=%d uneven_actors=%d",
			total.data, total.pings, total.exits, total.deadLetters, lastAt, uneven),
	}
}

// ---- savina_chameneos ----

const (
	red = iota
	yellow
	blue
	faded
)

func complement(mine, other int) int {
	if mine == faded || other == faded {
		return faded
	}
	if mine == other {
		return mine
	}
	return 3 - mine - other
}

type (
	chMeetMsg struct {
		id, colour int
	}
	chChangeMsg struct{ colour, partnerWas int }
	chExitMsg   struct{}
	chCountMsg  struct {
		id                              int
		meetings, wrongChanges, handled int64
		colour                          int
	}
)

// chCreature is Savina's ChameneosChameneoActor: it asks the mall for a meeting when it starts and
// after each meeting; met (the mall's forward of its partner's request) it takes the complement,
// tells the partner (Change) and asks again; on Exit it reports its count and exits.
func chCreature(id int, self chan message, mall chan<- message, all []chan message) {
	colour := id % 3
	var meetings, wrong, handled int64
	mall <- chMeetMsg{id, colour}
	for m := range self {
		handled++
		switch m := m.(type) {
		case chMeetMsg:
			was := colour
			colour = complement(colour, m.colour)
			meetings++
			all[m.id] <- chChangeMsg{colour, was}
			mall <- chMeetMsg{id, colour}
		case chChangeMsg:
			if complement(colour, m.partnerWas) != m.colour {
				wrong++
			}
			colour = m.colour
			meetings++
			mall <- chMeetMsg{id, colour}
		case chExitMsg:
			mall <- chCountMsg{id, meetings, wrong, handled, colour}
			return
		}
	}
}

// chMall is Savina's ChameneosMallActor: it makes the creatures when it starts, pairs each
// request with the one waiting, and once `meetings` are made answers every request with Exit; the
// creatures' counts end the run (Savina's mall exits there too). As chameneos.hpp's Mall.
func chMall(creatures int, meetings int64, self chan message, done chan<- string, handledOut *int64) {
	all := make([]chan message, creatures)
	for i := range all {
		all[i] = make(chan message, 4) // one Meet, Change or Exit at a time, as the mall pairs them
	}
	for i := range all {
		go chCreature(i, all[i], self, all)
	}
	var made, requests, exits, reports, badReports, counted, handled, wrongChanges int64
	finals := [3]int64{}
	reported := make([]bool, creatures)
	waiting, waitingID := false, 0
	for m := range self {
		switch m := m.(type) {
		case chMeetMsg:
			requests++
			switch {
			case made == meetings:
				exits++
				all[m.id] <- chExitMsg{}
			case !waiting:
				waiting, waitingID = true, m.id
			default:
				waiting = false
				made++
				all[waitingID] <- chMeetMsg{m.id, m.colour}
			}
		case chCountMsg:
			reports++
			handled += m.handled
			if reported[m.id] {
				badReports++
			}
			reported[m.id] = true
			counted += m.meetings
			wrongChanges += m.wrongChanges
			if m.colour == faded {
				badReports++
			} else {
				finals[m.colour]++
			}
			if reports == int64(creatures) {
				startC := [3]int64{}
				for i := 0; i < creatures; i++ {
					startC[i%3]++
				}
				mod3 := func(a, b int64) int64 { return (a + 3*(b+1) - b) % 3 }
				kept := mod3(finals[0], finals[1]) == mod3(startC[0], startC[1]) &&
					mod3(finals[1], finals[2]) == mod3(startC[1], startC[2]) && !waiting
				invariant := "broken"
				if kept {
					invariant = "kept"
				}
				*handledOut = requests + reports + handled
				done <- fmt.Sprintf("meetings=%d requests=%d exits=%d counted=%d reports=%d "+
					"wrong_changes=%d colour_invariant=%s", made, requests, exits, counted,
					reports-badReports, wrongChanges, invariant)
				return
			}
		}
	}
}

func savinaChameneos(creatures, meetings int64) result {
	done := make(chan string)
	var handled int64
	start := time.Now()
	mall := make(chan message, mailboxCapacity)
	go chMall(int(creatures), meetings, mall, done, &handled)
	answer := <-done
	elapsed := time.Since(start).Nanoseconds()
	return result{ElapsedNs: max64(elapsed, 1), Messages: handled, Answer: answer}
}

// ---- savina_big ----

// bigRandom is Savina's 16-bit PseudoRandom (random.hpp's PseudoRandom).
type bigRandom struct{ value uint64 }

func (r *bigRandom) next(bound uint64) uint64 {
	r.value = (r.value*1309 + 13849) & 65535
	return r.value % bound
}

const bigNobody = -1

type (
	bigPingMsg     struct{ from int }
	bigPongMsg     struct{ from int }
	bigFinishedMsg struct {
		actor               int
		pings, pongs, wrong int64
	}
)

// bigActor is Savina's BigActor: a Pong (the first, from nobody, its start) sends a Ping to a
// neighbour its generator draws, until it has sent `pings`; then it reports to the sink. A Ping
// is answered with a Pong. Its goroutine stays after its report to answer the others' pings: the
// sink's last report ends the run, as ours (Savina's sink tells the actors to exit).
func bigActor(index int, actors int, pings int64, seed uint64, self chan message, all []chan message,
	sink chan<- message, pinged *int64) {
	gen := bigRandom{seed + uint64(index)}
	expected := bigNobody
	var sent, pongs, wrong int64
	for m := range self {
		switch m := m.(type) {
		case bigPingMsg:
			*pinged++
			all[m.from] <- bigPongMsg{index}
		case bigPongMsg:
			pongs++
			if m.from != expected {
				wrong++
			}
			if sent == pings {
				sink <- bigFinishedMsg{index, sent, pongs, wrong}
				continue
			}
			sent++
			expected = int(gen.next(uint64(actors)))
			all[expected] <- bigPingMsg{index}
		}
	}
}

func bigPlan(actors int, pings int64, seed uint64) []int64 {
	pinged := make([]int64, actors)
	for i := 0; i < actors; i++ {
		gen := bigRandom{seed + uint64(i)}
		for n := int64(0); n < pings; n++ {
			pinged[gen.next(uint64(actors))]++
		}
	}
	return pinged
}

func savinaBig(actors, pings, seed int64) result {
	done := make(chan struct{})
	var finished, repeated, sentTotal, pongTotal, wrongTotal int64
	pinged := make([]int64, actors)
	start := time.Now()
	sink := make(chan message, mailboxCapacity)
	go func() {
		seen := make([]bool, actors)
		for m := range sink {
			f := m.(bigFinishedMsg)
			finished++
			if seen[f.actor] {
				repeated++
			}
			seen[f.actor] = true
			sentTotal += f.pings
			if f.pongs > 0 {
				pongTotal += f.pongs - 1 // the start's Pong not counted
			}
			wrongTotal += f.wrong
			if finished == actors {
				close(done)
				return
			}
		}
	}()
	// A mailbox holds at most one Ping from each actor and its own one Pong: with room for all,
	// no sender ever waits (bounded smaller, two actors pinging each other could wait on each other).
	all := make([]chan message, actors)
	for i := range all {
		all[i] = make(chan message, actors+1)
	}
	for i := range all {
		go bigActor(i, int(actors), pings, uint64(seed), all[i], all, sink, &pinged[i])
	}
	for _, a := range all {
		a <- bigPongMsg{bigNobody}
	}
	<-done
	elapsed := time.Since(start).Nanoseconds()
	// Every actor's last ping was answered before its report, so every Ping was handled before
	// the sink's last report: the counts are final.
	plan := bigPlan(int(actors), pings, uint64(seed))
	var received, uneven, most int64
	for i, c := range pinged {
		received += c
		if c > most {
			most = c
		}
		if c != plan[i] {
			uneven++
		}
	}
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  actors + received + pongTotal + finished,
		Answer: fmt.Sprintf("finished=%d repeated=%d pings=%d pongs=%d wrong_pongs=%d uneven_actors=%d most_pinged=%d",
			finished, repeated, sentTotal, pongTotal, wrongTotal, uneven, most),
	}
}
