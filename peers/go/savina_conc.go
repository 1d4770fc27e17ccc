// Savina's concurrency benchmarks 8-15 (savina_logmap, savina_banking, savina_cigsmok,
// savina_bndbuffer, savina_concdict, savina_concsll, savina_philosopher, savina_barber) on
// goroutines, in savina.go's idiom: each actor is a goroutine owning its mailbox channel,
// receiving one message at a time in a type switch. The messages are Savina's, the counts and the
// answers our kernels' (native/kernels/savina/<name>.cpp), whose answers do not depend on the
// schedule, checked by labctl against the kernel's expectation; so are the message counts, exact
// but philosopher's and barber's, whose denials and turned-away customers the schedule decides:
// those are held to the fewest a run handles (none denied, none turned away), with no most, and
// reported as ours' metrics. Each measured phase starts where ours does (the actors' making) and
// ends with the last message handled; each actor counts the messages it handles in a slot of its
// own, summed once the run has ended. Differences from Savina beyond savina.go's (bounded
// mailboxes, the scheduler made before the clock, one sample per run) are told at each kernel.
package main

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// FNV-1a over 64-bit words (random.hpp's fnv_fold).
const (
	fnvBasis uint64 = 0xcbf29ce484222325
	fnvPrime uint64 = 0x100000001b3
)

func fnvFold(hash, word uint64) uint64 { return (hash ^ word) * fnvPrime }

// mix64 is SplitMix64's finalizer (random.hpp's mix64).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// splitMix64 is random.hpp's SplitMix64: its state starts at mix64(seed*65536 + stream).
type splitMix64 struct{ state uint64 }

func newSplitMix64(seed uint64, stream uint32) splitMix64 {
	return splitMix64{mix64(seed*65536 + uint64(stream))}
}

func (r *splitMix64) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	return mix64(r.state)
}

// busyWork is random.hpp's busy_work: `steps` steps of a 64-bit LCG from `steps`.
func busyWork(steps uint32) uint64 {
	x := uint64(steps)
	for k := uint32(0); k < steps; k++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func sum(counts []int64) int64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	return total
}

// ---- savina_logmap (14. Logistic Map) ----

type (
	lmStartMsg    struct{}
	lmNextTermMsg struct{}
	lmGetTermMsg  struct{}
	lmComputeMsg  struct {
		term  float64
		reply chan<- float64
	}
	lmSeriesDoneMsg struct {
		id       int
		computed int64
		hash     uint64
		last     float64
	}
)

// lmComputer is Savina's RateComputer: each Compute answered with the next term at its rate.
func lmComputer(rate float64, self <-chan message, handled *int64) {
	for m := range self {
		c := m.(lmComputeMsg)
		*handled++
		c.reply <- rate * c.term * (1 - c.term) // Savina's computeNextTerm, its order of operations
	}
}

// lmWorker is Savina's SeriesWorker. For a NextTerm it sends its term to its computer and waits
// for the Result on a reply channel of its own (Go's request and reply): the requests that come
// meanwhile wait in its mailbox and are taken up after, oldest first, where ours holds them in a
// queue of its own (and Savina's re-sends each to itself). On GetTerm it reports its series.
func lmWorker(id int, term float64, self <-chan message, computer chan<- message, master chan<- message,
	handled *int64) {
	reply := make(chan float64, 1)
	var computed int64
	hash := fnvBasis
	for m := range self {
		*handled++
		switch m.(type) {
		case lmNextTermMsg:
			computer <- lmComputeMsg{term, reply}
			term = <-reply
			*handled++ // the Result
			computed++
			hash = fnvFold(hash, math.Float64bits(term))
		case lmGetTermMsg:
			master <- lmSeriesDoneMsg{id, computed, hash, term}
			return
		}
	}
}

// lmMaster is Savina's Master: on Start, `terms` rounds of NextTerm to every worker, then a
// GetTerm to each; it folds the reports in series order, whatever order they come in.
func lmMaster(terms int64, self <-chan message, workers []chan message, handled *int64, done chan<- string) {
	series := len(workers)
	hashes := make([]uint64, series)
	last := make([]float64, series)
	seen := make([]bool, series)
	var reported, computed int64
	for m := range self {
		*handled++
		switch m := m.(type) {
		case lmStartMsg:
			for t := int64(0); t < terms; t++ {
				for _, w := range workers {
					w <- lmNextTermMsg{}
				}
			}
			for _, w := range workers {
				w <- lmGetTermMsg{}
			}
		case lmSeriesDoneMsg:
			reported++
			computed += m.computed
			if m.id >= 0 && m.id < series && !seen[m.id] {
				seen[m.id] = true
				hashes[m.id], last[m.id] = m.hash, m.last
			}
			if reported != int64(series) {
				continue
			}
			hash, final := fnvBasis, 0.0
			for i := 0; i < series; i++ {
				hash = fnvFold(hash, hashes[i])
				final += last[i]
			}
			done <- fmt.Sprintf("series_reported=%d terms_computed=%d terms_hash=%016x final_sum=%s",
				reported, computed, hash, formatSum(final))
			return
		}
	}
}

// savina_logmap: the master, `series` rate computers and `series` workers made under the clock
// (as Savina's runIteration makes them), then Start. Series i has rate start_rate + i*increment
// and starts at term i*increment. Differences as ours (no Stop messages, hashed terms, the last
// terms summed in series order), and the worker's wait on a reply channel told at lmWorker.
func savinaLogmap(terms, series int64, startRate, increment float64) result {
	if last := float64(series-1) * increment; last > 1 {
		fail("param increment times (series - 1) must be at most 1 (series i starts at term i*increment), got %g", last)
	} else if startRate+last > 4 {
		fail("param start_rate + (series - 1) * increment must be at most 4, got %g", startRate+last)
	}
	handled := make([]int64, 1+2*series) // the master's, the computers', the workers'
	done := make(chan string)
	start := time.Now()
	master := make(chan message, mailboxCapacity) // Start and the reports
	workers := make([]chan message, series)
	for i := range workers {
		computer := make(chan message, 1) // one Compute at a time: its worker waits for the reply
		// float64(...) rounds the product alone, as ours: no fused multiply-add, whatever the target.
		go lmComputer(startRate+float64(float64(i)*increment), computer, &handled[1+i])
		workers[i] = make(chan message, mailboxCapacity) // the master's flood of NextTerms
		go lmWorker(i, float64(i)*increment, workers[i], computer, master, &handled[1+int(series)+i])
	}
	go lmMaster(terms, master, workers, &handled[0], done)
	master <- lmStartMsg{}
	answer := <-done
	elapsed := time.Since(start).Nanoseconds()
	// Every computer's count was written before its last reply, every worker's before its
	// report, every report handled before done: the counts are final.
	return result{ElapsedNs: max64(elapsed, 1), Messages: sum(handled), Answer: answer}
}

// ---- savina_banking (15. Bank Transaction) ----

// bankInitialBalance and bankAmountLimit are ours (banking.cpp): integer cents.
const (
	bankInitialBalance int64  = 1_000_000_000_000
	bankAmountLimit    uint64 = 100_000
)

type bankTransaction struct {
	source, destination uint32
	amount              int64
}

// bankDraw is banking.cpp's draw: a source below (accounts / 10) * 8, a destination above it.
func bankDraw(r *splitMix64, accounts uint32) bankTransaction {
	source := uint32(r.next() % uint64(accounts/10*8))
	step := uint32(r.next() % uint64(accounts-source))
	if step == 0 {
		step = 1
	}
	return bankTransaction{source, source + step, int64(r.next() % bankAmountLimit)}
}

func bankDigest(account uint32, balance int64) uint64 {
	return mix64(uint64(balance) + mix64(uint64(account)))
}

type (
	bankStartMsg  struct{}
	bankCreditMsg struct {
		id          int64
		amount      int64
		destination chan<- message
	}
	bankDebitMsg struct {
		id, amount int64
		reply      chan<- int64 // the creditor's reply channel: the Reply carries the id
	}
	bankCompletedMsg struct{ id int64 }
	bankStopMsg      struct{}
)

// bankAccount's counts, read once the run has ended.
type bankAccountTally struct {
	balance                           int64
	credits, debits, handled, stopped int64
}

// bankAccount is Savina's Account. A Credit takes the amount from its balance, sends the
// destination a Debit and waits for the Reply on a reply channel of its own: every other message
// waits in its mailbox meanwhile and is taken up after, in order, which is ours' stash (and
// Savina's, whose account re-sends each stashed message to itself). A Debit adds the amount and
// replies. The last account to stop ends the run.
func bankAccount(self <-chan message, teller chan<- message, t *bankAccountTally, running *int64,
	done chan<- struct{}) {
	reply := make(chan int64, 1)
	t.balance = bankInitialBalance
	for m := range self {
		t.handled++
		switch m := m.(type) {
		case bankCreditMsg:
			t.credits++
			t.balance -= m.amount
			m.destination <- bankDebitMsg{m.id, m.amount, reply}
			id := <-reply // the Reply's id, not the one awaited, goes to the teller
			t.handled++
			teller <- bankCompletedMsg{id}
		case bankDebitMsg:
			t.debits++
			t.balance += m.amount
			m.reply <- m.id
		case bankStopMsg:
			t.stopped++
			if atomic.AddInt64(running, -1) == 0 {
				close(done)
			}
			return
		}
	}
}

// bankTeller is Savina's Teller: on Start every transaction's Credit, then a Stop to every
// account once all are complete. It takes completions while it sends (a select): with bounded
// mailboxes, a teller that only sent could wait on an account's full mailbox while the accounts
// wait on its own, where Savina's teller sends every credit first into unbounded mailboxes.
func bankTeller(transactions int64, seed uint64, self <-chan message, accounts []chan message,
	completed, repeated, handled *int64) {
	random := newSplitMix64(seed, 0)
	seen := make([]bool, transactions)
	complete := func(m message) {
		*handled++
		id := m.(bankCompletedMsg).id
		if seen[id] {
			*repeated++
		}
		seen[id] = true
		*completed++
	}
	stopAll := func() {
		for _, a := range accounts {
			a <- bankStopMsg{}
		}
	}
	<-self // Start
	*handled++
	for t := int64(0); t < transactions; t++ {
		tx := bankDraw(&random, uint32(len(accounts)))
		credit := bankCreditMsg{t, tx.amount, accounts[tx.destination]}
		for sent := false; !sent; {
			select {
			case accounts[tx.source] <- credit:
				sent = true
			case m := <-self:
				complete(m)
			}
		}
	}
	if transactions == 0 {
		stopAll()
		return
	}
	for m := range self {
		complete(m)
		if *completed == transactions {
			stopAll()
			return
		}
	}
}

// savina_banking: the teller and `accounts` accounts made under the clock, then Start; the run
// ends when the last account has handled its Stop. Differences as ours (integer cents, a
// SplitMix64 stream from `seed`, ids in the messages, a stashed message handled in place), and
// the account's wait and the teller's select told above.
func savinaBanking(accounts, transactions, seed int64) result {
	tallies := make([]bankAccountTally, accounts)
	var completed, repeated, tellerHandled int64
	running := accounts
	done := make(chan struct{})
	start := time.Now()
	teller := make(chan message, mailboxCapacity) // Start and the completions
	all := make([]chan message, accounts)
	for i := range all {
		all[i] = make(chan message, mailboxCapacity) // the teller's credits, others' debits
		go bankAccount(all[i], teller, &tallies[i], &running, done)
	}
	go bankTeller(transactions, uint64(seed), teller, all, &completed, &repeated, &tellerHandled)
	teller <- bankStartMsg{}
	<-done
	elapsed := time.Since(start).Nanoseconds()
	// Every account's writes happened before its stop's count-down, the teller's before its
	// Stops: the last count-down closed done after them all.
	var credits, debits, stopped, total int64
	var digest uint64
	messages := tellerHandled
	for i, t := range tallies {
		messages += t.handled
		credits += t.credits
		debits += t.debits
		stopped += t.stopped
		total += t.balance
		digest += bankDigest(uint32(i), t.balance)
	}
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  messages,
		Answer: fmt.Sprintf("completed=%d repeated=%d credits=%d debits=%d stopped=%d total=%d digest=%d",
			completed, repeated, credits, debits, stopped, total, digest),
	}
}

// ---- savina_cigsmok (13. Cigarette Smokers) ----

// csPick is a round's pick, drawn as Savina's arbiter draws them (cigsmok.cpp's draw): the
// smoker, then its spell of work, from Savina's PseudoRandom.
func csPick(r *bigRandom, smokers uint64) (smoker uint64, work uint32) {
	smoker = r.next(smokers)
	work = uint32(r.next(1000) + 10)
	return
}

type (
	csStartMsg          struct{}
	csStartSmokingMsg   struct{ work uint32 }
	csStartedSmokingMsg struct{}
	csExitMsg           struct{}
	csTallyMsg          struct {
		smoker                            int
		smokes, exits, workUnits, handled int64
		workSum                           uint64
	}
)

// csSmoker is Savina's SmokerActor: on StartSmoking it tells the arbiter at once, then smokes
// (busyWork, as ours, in place of Savina's busy-wait); on Exit it sends its tally (ours'
// difference: Savina's smoker only exits).
func csSmoker(index int, self <-chan message, arbiter chan<- message) {
	var smokes, workUnits, handled int64
	var workSum uint64
	for m := range self {
		handled++
		switch m := m.(type) {
		case csStartSmokingMsg:
			arbiter <- csStartedSmokingMsg{}
			smokes++
			workUnits += int64(m.work)
			workSum += busyWork(m.work)
		case csExitMsg:
			arbiter <- csTallyMsg{index, smokes, 1, workUnits, handled, workSum}
			return
		}
	}
}

// csArbiter is Savina's ArbiterActor: Start and each StartedSmoking pick the next smoker, until
// `rounds` rounds; then Exit to every smoker, and the tallies end the run (cigsmok.cpp's answer).
// plan: each smoker's smokes as the seeded picks say, replayed before the clock (ours' model).
func csArbiter(rounds uint64, seed uint64, plan []int64, self <-chan message, smokers []chan message,
	done chan<- result) {
	random := bigRandom{seed}
	smokes := make([]int64, len(smokers))
	var start, started, round, tallies, reported, smoked, startSmoking, exits, workUnits, handled int64
	var workSum uint64
	notify := func() {
		s, work := csPick(&random, uint64(len(smokers)))
		smokers[s] <- csStartSmokingMsg{work}
	}
	for m := range self {
		switch m := m.(type) {
		case csStartMsg:
			start++
			notify()
		case csStartedSmokingMsg:
			started++
			if round++; uint64(round) >= rounds {
				for _, s := range smokers {
					s <- csExitMsg{}
				}
			} else {
				notify()
			}
		case csTallyMsg:
			tallies++
			reported++
			smoked += m.smokes
			startSmoking += m.smokes
			exits += m.exits
			workUnits += m.workUnits
			workSum += m.workSum
			handled += m.handled
			if m.smoker >= 0 && m.smoker < len(smokes) {
				smokes[m.smoker] = m.smokes
			}
			if tallies != int64(len(smokers)) {
				continue
			}
			hash := fnvBasis
			var uneven int64
			for i, c := range smokes {
				hash = fnvFold(hash, uint64(c))
				if c != plan[i] {
					uneven++
				}
			}
			done <- result{
				Messages: start + started + tallies + handled,
				Answer: fmt.Sprintf("smokers_reported=%d smokes=%d uneven_smokers=%d smokes_hash=%016x "+
					"work_units=%d work_sum=%d start=%d start_smoking=%d started_smoking=%d exit=%d tally=%d",
					reported, smoked, uneven, hash, workUnits, workSum, start, startSmoking, started, exits, tallies),
			}
			return
		}
	}
}

// savina_cigsmok: the arbiter and `smokers` smokers made under the clock, then Start; the run
// ends when the arbiter has every tally. Seed 0 is Savina's own, rounds*smokers. Differences
// as ours (the synthetic work, the tallies).
func savinaCigsmok(rounds, smokers, seed int64) result {
	if seed == 0 {
		seed = rounds * smokers
	}
	plan := make([]int64, smokers)
	replay := bigRandom{uint64(seed)}
	for r := int64(0); r < rounds; r++ {
		s, _ := csPick(&replay, uint64(smokers))
		plan[s]++
	}
	done := make(chan result)
	start := time.Now()
	arbiter := make(chan message, mailboxCapacity) // one StartedSmoking at a time, and the tallies
	all := make([]chan message, smokers)
	for i := range all {
		all[i] = make(chan message, 2) // one StartSmoking at a time, then Exit
		go csSmoker(i, all[i], arbiter)
	}
	go csArbiter(uint64(rounds), uint64(seed), plan, arbiter, all, done)
	arbiter <- csStartMsg{}
	res := <-done
	res.ElapsedNs = max64(time.Since(start).Nanoseconds(), 1)
	return res
}

// ---- savina_bndbuffer (10. Producer-Consumer with Bounded Buffer) ----

// bbProcessItem is Savina's processItem (bndbuffer.cpp's process_item): cost x 100 logarithms of
// its PseudoRandom's doubles (one with cost 0), the generator seeded with the cost. Go's math.Log
// may differ from glibc's in the last place: the items' values are not part of the answer.
func bbProcessItem(current float64, cost int64) float64 {
	result := current
	random := bigRandom{uint64(cost)}
	nextDouble := func() float64 { return 1.0 / float64(random.next(1<<16)+1) }
	if cost > 0 {
		for i := int64(0); i < cost; i++ {
			for j := 0; j < 100; j++ {
				result += math.Log(math.Abs(nextDouble()) + 0.01)
			}
		}
	} else {
		result += math.Log(math.Abs(nextDouble()) + 0.01)
	}
	return result
}

// bbSink keeps the synthetic work's results, so that no compiler drops it.
var bbSink float64

type (
	bbProduceMsg struct{}
	bbDataMsg    struct {
		producer int
		seq      int64
		value    float64
	}
	bbAvailableMsg    struct{ consumer int }
	bbProducerExitMsg struct{}
	bbConsumerExitMsg struct{}
)

// bbSetup is what the manager, producers and consumers share, each writing its own slots.
type bbSetup struct {
	bufferSize, producers, consumers, items, produceCost, consumeCost int64
	consumed                                                          []uint32 // times item producer*items+seq was consumed
	produced, handled                                                 []int64  // the manager's slot, the producers', the consumers'
	sinks                                                             []float64
	consumersLeft                                                     int64 // the last to exit ends the run
	done                                                              chan struct{}
}

// bbProducer is Savina's ProducerActor: each Produce makes the next item (its synthetic work) and
// sends it to the manager; a Produce with every item made tells the manager it has exited.
func bbProducer(id int, s *bbSetup, self <-chan message, manager chan<- message) {
	slot := 1 + id
	item := 0.0
	var produced int64
	for range self {
		s.handled[slot]++
		if produced == s.items {
			s.produced[id], s.sinks[slot] = produced, item
			manager <- bbProducerExitMsg{}
			return
		}
		item = bbProcessItem(item, s.produceCost)
		manager <- bbDataMsg{id, produced, item}
		produced++
	}
}

// bbConsumer is Savina's ConsumerActor: each item consumed (its synthetic work) and counted, then
// the manager told it is free; the last consumer to handle its Exit ends the run.
func bbConsumer(id int, s *bbSetup, self <-chan message, manager chan<- message) {
	slot := 1 + int(s.producers) + id
	item := 0.0
	for m := range self {
		s.handled[slot]++
		switch m := m.(type) {
		case bbDataMsg:
			item = bbProcessItem(item+m.value, s.consumeCost)
			if m.producer >= 0 && int64(m.producer) < s.producers && m.seq >= 0 && m.seq < s.items {
				atomic.AddUint32(&s.consumed[int64(m.producer)*s.items+m.seq], 1)
			}
			manager <- bbAvailableMsg{id}
		case bbConsumerExitMsg:
			s.sinks[slot] = item
			if atomic.AddInt64(&s.consumersLeft, -1) == 0 {
				close(s.done)
			}
			return
		}
	}
}

// bbManager is Savina's ManagerActor: when it starts it makes the consumers (every one free) and
// the producers and tells each producer to produce; it hands each item to the first free
// consumer or keeps it in its buffer (a slice), and tells its producer to produce again unless the
// buffer holds buffer_size - producers items or more (then the producer waits for room); once
// every producer has exited and every consumer is free it tells the consumers to exit.
func bbManager(s *bbSetup, self chan message, overBuffer *int64) {
	consumers := make([]chan message, s.consumers)
	var available []int // consumers, in the order they became free
	for i := range consumers {
		consumers[i] = make(chan message, 2) // one item at a time, then Exit
		go bbConsumer(i, s, consumers[i], self)
		available = append(available, i)
	}
	producers := make([]chan message, s.producers)
	for i := range producers {
		producers[i] = make(chan message, 1) // one Produce at a time
		go bbProducer(i, s, producers[i], self)
	}
	for _, p := range producers {
		p <- bbProduceMsg{}
	}
	adjusted := int(s.bufferSize - s.producers) // Savina's: room for an item from each producer in flight
	var pending []bbDataMsg
	var parked []int // producers waiting for room
	var exited int64
	tryExit := func() {
		if exited == s.producers && int64(len(available)) == s.consumers {
			for _, c := range consumers {
				c <- bbConsumerExitMsg{}
			}
		}
	}
	for m := range self {
		s.handled[0]++
		switch m := m.(type) {
		case bbDataMsg:
			if len(available) == 0 {
				pending = append(pending, m)
				if int64(len(pending)) > s.bufferSize {
					*overBuffer++
				}
			} else {
				consumers[available[0]] <- m
				available = available[1:]
			}
			if len(pending) >= adjusted {
				parked = append(parked, m.producer)
			} else {
				producers[m.producer] <- bbProduceMsg{}
			}
		case bbAvailableMsg:
			if len(pending) == 0 {
				available = append(available, m.consumer)
				tryExit()
			} else {
				consumers[m.consumer] <- pending[0]
				pending = pending[1:]
				if len(parked) > 0 {
					producers[parked[0]] <- bbProduceMsg{}
					parked = parked[1:]
				}
			}
		case bbProducerExitMsg:
			exited++
			tryExit()
		}
	}
}

// savina_bndbuffer: the manager made under the clock, which makes the others when it starts (as
// Savina's); the run ends when the last consumer has handled its Exit. Differences as ours
// (producers and consumers named by index, items carrying their sequence number).
func savinaBndbuffer(bufferSize, producers, consumers, items, produceCost, consumeCost int64) result {
	if bufferSize <= producers {
		fail("param buffer_size (%d) must exceed producers (%d): the manager keeps room for an item "+
			"from each producer in flight", bufferSize, producers)
	}
	if producers*items > 1_000_000_000 {
		fail("param producers * items_per_producer must be at most 1000000000 (each item is tracked)")
	}
	agents := 1 + producers + consumers
	s := &bbSetup{bufferSize: bufferSize, producers: producers, consumers: consumers, items: items,
		produceCost: produceCost, consumeCost: consumeCost, consumed: make([]uint32, producers*items),
		produced: make([]int64, producers), handled: make([]int64, agents), sinks: make([]float64, agents),
		consumersLeft: consumers, done: make(chan struct{})}
	var overBuffer int64
	start := time.Now()
	manager := make(chan message, mailboxCapacity) // items, availabilities and exits
	go bbManager(s, manager, &overBuffer)
	<-s.done
	elapsed := time.Since(start).Nanoseconds()
	// The producers' writes came before their exits, the manager's before its Exits, the
	// consumers' before their count-down: the last closed done after them all.
	var produced, shortProducers, consumed, once int64
	for _, p := range s.produced {
		produced += p
		if p != items {
			shortProducers++
		}
	}
	for _, times := range s.consumed {
		consumed += int64(times)
		if times == 1 {
			once++
		}
	}
	for _, x := range s.sinks {
		bbSink += x
	}
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages:  sum(s.handled),
		Answer: fmt.Sprintf("produced=%d consumed=%d consumed_once=%d short_producers=%d over_buffer=%d",
			produced, consumed, once, shortProducers, overBuffer),
	}
}

// ---- savina_concdict (8. Concurrent Dictionary) and savina_concsll (9. Concurrent Sorted
// Linked List): workers, a master and one server agent ----

type (
	srvDoWorkMsg  struct{}
	srvReplyMsg   struct{ value uint64 }
	srvEndWorkMsg struct{ replies int64 }
	srvEndMsg     struct{ replies int64 }
)

// srvWorker is Savina's worker of both: on DoWork and on each Reply it sends its next request
// (next makes it, carrying the worker's mailbox), one outstanding at a time; after `messages`
// it tells the master it is done with its count of replies.
func srvWorker(messages int64, next func(self chan<- message) message, self chan message, server,
	master chan<- message, handled *int64) {
	var sent, replies int64
	for m := range self {
		*handled++
		if _, ok := m.(srvReplyMsg); ok {
			replies++
		}
		if sent == messages {
			master <- srvEndWorkMsg{replies}
			return
		}
		sent++
		server <- next(self)
	}
}

// srvMaster is Savina's master of both: it starts every worker (one DoWork each, Savina's
// onPostStart) and, once every one is done, tells the server to end with the replies' total.
func srvMaster(self <-chan message, workers []chan message, server chan<- message, handled *int64) {
	for _, w := range workers {
		w <- srvDoWorkMsg{}
	}
	var ended, replies int64
	for m := range self {
		*handled++
		replies += m.(srvEndWorkMsg).replies
		if ended++; ended == int64(len(workers)) {
			server <- srvEndMsg{replies}
			return
		}
	}
}

// runServed makes `workers` workers, each with its request maker, and the master under the
// clock (the server already made by the caller, under it too), and returns the server's
// answer, the elapsed time and every agent's handled messages but the server's.
func runServed(workers int, messages int64, next func(worker int) func(self chan<- message) message,
	server chan message, start time.Time, done <-chan string) (string, int64, int64) {
	handled := make([]int64, workers+1)
	master := make(chan message, mailboxCapacity) // the workers' ends
	all := make([]chan message, workers)
	for i := range all {
		all[i] = make(chan message, 1) // DoWork, then one Reply at a time
		go srvWorker(messages, next(i), all[i], server, master, &handled[i])
	}
	go srvMaster(master, all, server, &handled[workers])
	answer := <-done
	elapsed := time.Since(start).Nanoseconds()
	// Every worker's count was written before its end, the master's before the server's End.
	return answer, max64(elapsed, 1), sum(handled)
}

type (
	cdWriteMsg struct {
		sender     chan<- message
		key, value uint32
	}
	cdReadMsg struct {
		sender chan<- message
		key    uint32
	}
)

// cdEntryDigest is concdict.cpp's entry_digest: one entry's share of the digest (a sum).
func cdEntryDigest(key, value uint32) uint64 { return mix64(uint64(key)<<32 | uint64(value)) }

// cdGenerator is concdict.cpp's Generator: worker w writes only keys k with k % workers == w.
type cdGenerator struct {
	random                      splitMix64
	workers, writePercent, keys uint64
	worker, ownKeys             uint64
}

func newCdGenerator(workers, writePercent, keys, seed uint64, worker uint32) cdGenerator {
	return cdGenerator{newSplitMix64(seed, worker), workers, writePercent, keys, uint64(worker),
		(keys - uint64(worker) + workers - 1) / workers}
}

func (g *cdGenerator) next() (write bool, key, value uint32) {
	if g.random.next()%100 < g.writePercent {
		key = uint32(g.worker + g.workers*(g.random.next()%g.ownKeys))
		return true, key, uint32(g.random.next() >> 32)
	}
	return false, uint32(g.random.next() % g.keys), 0
}

// cdDictionary is Savina's DictionaryActor: a Go map, a write or a read answered with a Reply;
// on End it digests its contents and the run ends.
func cdDictionary(initial map[uint32]uint32, self <-chan message, handled *int64, done chan<- string) {
	data := make(map[uint32]uint32, len(initial))
	for k, v := range initial { // Savina's dictionary copies the initial map when made
		data[k] = v
	}
	var reads, writes int64
	for m := range self {
		*handled++
		switch m := m.(type) {
		case cdWriteMsg:
			writes++
			data[m.key] = m.value
			m.sender <- srvReplyMsg{uint64(m.value)}
		case cdReadMsg:
			reads++
			m.sender <- srvReplyMsg{uint64(data[m.key])} // 0 where absent, as ours
		case srvEndMsg:
			var digest uint64
			for k, v := range data {
				digest += cdEntryDigest(k, v)
			}
			done <- fmt.Sprintf("reads=%d writes=%d replies=%d size=%d digest=%d",
				reads, writes, m.replies, len(data), digest)
			return
		}
	}
}

// savina_concdict: the dictionary, `workers` workers and the master made under the clock (the
// initial map {k: k} filled before it, as Savina fills it while parsing its arguments); the run
// ends when the dictionary has handled End. Differences as ours (each worker's SplitMix64 stream,
// its own keys to write, 32-bit keys and values), in a Go map.
func savinaConcdict(workers, messages, writePercent, keys, seed int64) result {
	if keys < workers {
		fail("param keys (%d) must be at least workers (%d): each worker writes its own keys", keys, workers)
	}
	initial := make(map[uint32]uint32, keys)
	for k := uint32(0); k < uint32(keys); k++ {
		initial[k] = k
	}
	var serverHandled int64
	done := make(chan string)
	start := time.Now()
	server := make(chan message, mailboxCapacity) // one request from each worker at most, and End
	go cdDictionary(initial, server, &serverHandled, done)
	next := func(worker int) func(self chan<- message) message {
		g := newCdGenerator(uint64(workers), uint64(writePercent), uint64(keys), uint64(seed), uint32(worker))
		return func(self chan<- message) message {
			write, key, value := g.next()
			if write {
				return cdWriteMsg{self, key, value}
			}
			return cdReadMsg{self, key}
		}
	}
	answer, elapsed, handled := runServed(int(workers), messages, next, server, start, done)
	return result{ElapsedNs: elapsed, Messages: handled + serverHandled, Answer: answer}
}

type (
	slWriteMsg struct {
		sender chan<- message
		value  uint32
	}
	slContainsMsg struct {
		sender chan<- message
		value  uint32
	}
	slSizeMsg struct{ sender chan<- message }
)

// slNode is a node of Savina's SortedLinkedList.
type slNode struct {
	value uint32
	next  *slNode
}

// slList is Savina's SortedLinkedList (concsll.cpp's SortedList): an insert after the last
// element not greater than it, a membership test walking until it finds the value, a size that
// walks it all.
type slList struct{ head *slNode }

func (l *slList) add(value uint32) {
	node := &slNode{value: value}
	if l.head == nil || value < l.head.value {
		node.next, l.head = l.head, node
		return
	}
	before := l.head
	for before.next != nil && !(value < before.next.value) {
		before = before.next
	}
	node.next, before.next = before.next, node
}

func (l *slList) contains(value uint32) bool {
	for n := l.head; n != nil; n = n.next {
		if n.value == value {
			return true
		}
	}
	return false
}

func (l *slList) size() uint64 {
	var count uint64
	for n := l.head; n != nil; n = n.next {
		count++
	}
	return count
}

// slOperation is concsll.cpp's next_operation: a draw below 100; under size_percent a size query,
// under size_percent + write_percent an insert, else a membership test.
func slOperation(r *splitMix64, sizePercent, writePercent uint64, self chan<- message) message {
	draw := r.next() % 100
	switch {
	case draw < sizePercent:
		return slSizeMsg{self}
	case draw < sizePercent+writePercent:
		return slWriteMsg{self, uint32(r.next() >> 32)}
	default:
		return slContainsMsg{self, uint32(r.next() >> 32)}
	}
}

// slListActor is Savina's SortedListActor: each request answered with a Reply; on End it walks
// its list (length, order, digest) and the run ends.
func slListActor(self <-chan message, handled *int64, done chan<- string) {
	var list slList
	var contains, writes, sizes int64
	for m := range self {
		*handled++
		switch m := m.(type) {
		case slWriteMsg:
			writes++
			list.add(m.value)
			m.sender <- srvReplyMsg{uint64(m.value)}
		case slContainsMsg:
			contains++
			found := uint64(0)
			if list.contains(m.value) {
				found = 1
			}
			m.sender <- srvReplyMsg{found}
		case slSizeMsg:
			sizes++
			m.sender <- srvReplyMsg{list.size()}
		case srvEndMsg:
			var length, unsorted, digest uint64
			for n := list.head; n != nil; n, length = n.next, length+1 {
				if n.next != nil && n.next.value < n.value {
					unsorted++
				}
				digest += mix64(length<<32 | uint64(n.value))
			}
			done <- fmt.Sprintf("contains=%d writes=%d sizes=%d replies=%d length=%d unsorted=%d digest=%d",
				contains, writes, sizes, m.replies, length, unsorted, digest)
			return
		}
	}
}

// savina_concsll: the list agent, `workers` workers and the master made under the clock; the run
// ends when the list has handled End. Differences as ours (each worker's SplitMix64 stream,
// 32-bit values).
func savinaConcsll(workers, messages, writePercent, sizePercent, seed int64) result {
	if writePercent+sizePercent > 100 {
		fail("param write_percent (%d) plus size_percent (%d) must be at most 100", writePercent, sizePercent)
	}
	var serverHandled int64
	done := make(chan string)
	start := time.Now()
	server := make(chan message, mailboxCapacity) // one request from each worker at most, and End
	go slListActor(server, &serverHandled, done)
	next := func(worker int) func(self chan<- message) message {
		r := newSplitMix64(uint64(seed), uint32(worker))
		return func(self chan<- message) message {
			return slOperation(&r, uint64(sizePercent), uint64(writePercent), self)
		}
	}
	answer, elapsed, handled := runServed(int(workers), messages, next, server, start, done)
	return result{ElapsedNs: elapsed, Messages: handled + serverHandled, Answer: answer}
}

// ---- savina_philosopher (11. Dining Philosophers) ----

type (
	phStartMsg  struct{}
	phHungryMsg struct{ id int }
	phDoneMsg   struct{ id int }
	phExitMsg   struct{ id int }
	phEatMsg    struct{}
	phDeniedMsg struct{}
)

// phTally is what a philosopher counted, in a slot of its own: written before its Exit, read by
// the arbitrator once it has every Exit.
type phTally struct{ eaten, denied, handled int64 }

// phPhilosopher is Savina's PhilosopherActor: Start and each Denied send the arbitrator Hungry; an
// Eat counts a meal, sends Done, and Start to itself until `rounds` meals, then Exit (and the
// goroutine ends, Savina's exit()). Each counts its own denials, where Savina's adds its running
// count to one AtomicLong all share after every meal (ours' difference).
func phPhilosopher(id int, rounds int64, self chan message, arbitrator chan<- message, t *phTally) {
	for m := range self {
		t.handled++
		switch m.(type) {
		case phStartMsg:
			arbitrator <- phHungryMsg{id}
		case phDeniedMsg:
			t.denied++
			arbitrator <- phHungryMsg{id}
		case phEatMsg:
			t.eaten++
			arbitrator <- phDoneMsg{id}
			if t.eaten < rounds {
				self <- phStartMsg{}
			} else {
				arbitrator <- phExitMsg{id}
				return
			}
		}
	}
}

// phArbitrator is Savina's ArbitratorActor: a Hungry is answered Eat, both forks taken, if both
// are free, else Denied; a Done frees them; the last Exit ends the run. It records which
// philosopher holds each fork, where Savina's records whether it is taken, and checks what ours
// checks (philosopher.cpp): no fork granted while held nor released by another than its holder,
// none held at the end, every philosopher's meals as granted, every denial received.
func phArbitrator(rounds int64, self <-chan message, philosophers []chan message, tallies []phTally,
	done chan<- result) {
	const free = -1
	n := len(philosophers)
	holder := make([]int, n) // fork i: the philosopher holding it, or free
	for i := range holder {
		holder[i] = free
	}
	meals := make([]int64, n) // granted, per philosopher
	var handled, granted, denials, conflicts, wrongReleases, exits int64
	for m := range self {
		handled++
		switch m := m.(type) {
		case phHungryMsg:
			left, right := m.id, (m.id+1)%n
			if holder[left] != free || holder[right] != free {
				denials++
				philosophers[m.id] <- phDeniedMsg{}
				continue
			}
			// Checked beside the rule that ensures it: neither neighbour eats.
			before := (m.id + n - 1) % n
			if n > 1 && (holder[before] == before || holder[right] == right) {
				conflicts++
			}
			holder[left], holder[right] = m.id, m.id
			meals[m.id]++
			granted++
			philosophers[m.id] <- phEatMsg{}
		case phDoneMsg:
			left, right := m.id, (m.id+1)%n
			if holder[left] != m.id || holder[right] != m.id {
				wrongReleases++
			}
			holder[left], holder[right] = free, free
		case phExitMsg:
			if exits++; exits < int64(n) {
				continue
			}
			var forksLeftHeld, eaten, denied, uneven int64
			for _, h := range holder {
				if h != free {
					forksLeftHeld++
				}
			}
			for i := range tallies {
				t := tallies[i]
				handled += t.handled
				eaten += t.eaten
				denied += t.denied
				if t.eaten != rounds || meals[i] != rounds {
					uneven++
				}
			}
			if eaten != granted {
				eaten = 0
			}
			lost := denied - denials
			if lost < 0 {
				lost = -lost
			}
			done <- result{
				Messages: handled,
				Answer: fmt.Sprintf("philosophers=%d meals=%d uneven_philosophers=%d fork_conflicts=%d "+
					"wrong_releases=%d forks_left_held=%d lost_denials=%d",
					n, eaten, uneven, conflicts, wrongReleases, forksLeftHeld, lost),
				Metrics: map[string]float64{"denials": float64(denials)},
			}
			return
		}
	}
}

// savina_philosopher: the arbitrator and `philosophers` philosophers made under the clock, each
// sent Start; the run ends when the arbitrator has every Exit. 4*philosophers*rounds +
// philosophers + 2*denials messages, the denials the schedule's (the metric denials, the
// arbitrator's count). Differences as ours (the holder of each fork recorded, philosophers named
// by index, no shared retry counter).
func savinaPhilosopher(philosophers, rounds int64) result {
	tallies := make([]phTally, philosophers)
	done := make(chan result)
	start := time.Now()
	// At most a Done and a Hungry, or a Done and an Exit, from each philosopher at once.
	arbitrator := make(chan message, mailboxCapacity)
	all := make([]chan message, philosophers)
	for i := range all {
		// One message at a time: its Start, or the answer to its one Hungry, whose handling sends
		// Start to itself only once the mailbox is empty.
		all[i] = make(chan message, 1)
	}
	go phArbitrator(rounds, arbitrator, all, tallies, done)
	for i := range all {
		go phPhilosopher(i, rounds, all[i], arbitrator, &tallies[i])
	}
	for _, p := range all {
		p <- phStartMsg{}
	}
	res := <-done
	res.ElapsedNs = max64(time.Since(start).Nanoseconds(), 1)
	return res
}

// ---- savina_barber (12. Sleeping Barber) ----

// sbWork is a sequence of spells of synthetic work (barber.cpp's Work): their units and their
// busyWork results summed.
type sbWork struct{ units, sum uint64 }

func (w *sbWork) add(spell uint32) {
	w.units += uint64(spell)
	w.sum += busyWork(spell)
}

// sbDraw is a spell of work drawn as Savina draws its busy-wait (nextInt(rate) + 10).
func sbDraw(r *bigRandom, rate uint32) uint32 { return uint32(r.next(uint64(rate)) + 10) }

// sbCounts is what the agents counted (barber.cpp's Counts), carried with the Exits to the barber.
type sbCounts struct {
	customers, returned, served, servedWrong, repeated uint64 // the factory's
	factoryWork                                        sbWork
	enters, full, wakes, waits, nexts, toBarber        uint64 // the room's
	haircuts                                           uint64 // the barber's
	barberWork                                         sbWork
	customerStarts, customerDones, customerFulls       uint64 // the customers', summed at their Done
	customerWaits                                      uint64
}

// sbAccountingErrors is barber.cpp's accounting_errors: every schedule's invariants.
func sbAccountingErrors(c *sbCounts) uint64 {
	var errors uint64
	one := func(wrong bool) {
		if wrong {
			errors++
		}
	}
	one(c.enters != c.customers+c.returned)
	one(c.full != c.returned || c.customerFulls != c.returned)
	one(c.enters-c.full != c.wakes+c.waits)
	one(c.customerWaits != c.waits)
	one(c.toBarber != c.haircuts || c.nexts != c.wakes+c.haircuts)
	one(c.customerStarts != c.haircuts || c.customerDones != c.haircuts)
	return errors
}

type (
	sbStartMsg        struct{}
	sbEnterMsg        struct{ customer chan message }
	sbReturnedMsg     struct{ customer chan message }
	sbFullMsg         struct{}
	sbWaitMsg         struct{}
	sbNextMsg         struct{}
	sbStartCutMsg     struct{}
	sbDoneCutMsg      struct{}
	sbCustomerDoneMsg struct {
		id                          uint64
		starts, dones, fulls, waits uint64
	}
	sbExitRoomMsg   struct{ counts sbCounts }
	sbExitBarberMsg struct{ counts sbCounts }
)

// sbCustomer is Savina's CustomerActor: turned away (Full), it asks the factory to send it again
// (Returned, carrying its mailbox); DoneCut is answered with its Done to the factory, carrying its
// counts (ours' difference), and the goroutine ends (Savina's exit()).
func sbCustomer(id uint64, self chan message, factory chan<- message) {
	var starts, dones, fulls, waits uint64
	for m := range self {
		switch m.(type) {
		case sbFullMsg:
			fulls++
			factory <- sbReturnedMsg{self}
		case sbWaitMsg:
			waits++
		case sbStartCutMsg:
			starts++
		case sbDoneCutMsg:
			dones++
			factory <- sbCustomerDoneMsg{id, starts, dones, fulls, waits}
			return
		}
	}
}

// sbBarber is Savina's BarberActor: for each customer the room sends it, StartCut, a spell of
// work drawn from its PseudoRandom, DoneCut, and a Next to the room. The room's Exit, carrying
// every count, ends the run (it is sent no Wait: ours' difference).
func sbBarber(seed uint64, rate uint32, self <-chan message, room chan<- message, done chan<- sbCounts) {
	random := bigRandom{seed}
	var haircuts uint64
	var work sbWork
	for m := range self {
		switch m := m.(type) {
		case sbEnterMsg:
			m.customer <- sbStartCutMsg{}
			work.add(sbDraw(&random, rate))
			haircuts++
			m.customer <- sbDoneCutMsg{}
			room <- sbNextMsg{}
		case sbExitBarberMsg:
			counts := m.counts
			counts.haircuts, counts.barberWork = haircuts, work
			done <- counts
			return
		}
	}
}

// sbRoom is Savina's WaitingRoomActor: an Enter finding every seat taken is answered Full; else
// the customer is seated and a sleeping barber woken (a Next to itself) or the customer told to
// wait. A Next sends the first waiting customer to the barber, or lets the barber sleep. The
// factory's Exit is handed to the barber once it sleeps (ours' difference: its last Next may still
// be on its way), and the goroutine ends.
func sbRoom(seats uint64, self chan message, barber chan<- message) {
	var waiting []chan message
	asleep, exiting := true, false
	var c sbCounts
	for m := range self {
		switch m := m.(type) {
		case sbEnterMsg:
			c.enters++
			if uint64(len(waiting)) == seats {
				c.full++
				m.customer <- sbFullMsg{}
				continue
			}
			waiting = append(waiting, m.customer)
			if asleep {
				asleep = false
				c.wakes++
				self <- sbNextMsg{}
			} else {
				c.waits++
				m.customer <- sbWaitMsg{}
			}
		case sbNextMsg:
			c.nexts++
			if len(waiting) > 0 {
				customer := waiting[0]
				waiting = waiting[1:]
				c.toBarber++
				barber <- sbEnterMsg{customer}
				continue
			}
			asleep = true
			if exiting {
				barber <- sbExitBarberMsg{c}
				return
			}
		case sbExitRoomMsg:
			f := m.counts // the factory's counts and the customers', beside the room's own
			c.customers, c.returned, c.served, c.servedWrong, c.repeated = f.customers, f.returned, f.served,
				f.servedWrong, f.repeated
			c.factoryWork = f.factoryWork
			c.customerStarts, c.customerDones, c.customerFulls, c.customerWaits = f.customerStarts,
				f.customerDones, f.customerFulls, f.customerWaits
			exiting = true
			if asleep {
				barber <- sbExitBarberMsg{c}
				return
			}
		}
	}
}

// sbFactory is Savina's CustomerFactoryActor: on Start it makes `haircuts` customers, each a
// goroutine with its mailbox, sending each into the room and working a spell drawn from its
// PseudoRandom after each; a Returned customer is sent into the room again; after the last
// customer's Done it sends the room Exit with its counts. A customer's id is its ordinal (Savina's
// an AtomicLong shared with the attempts it counts; the room counts them here, as ours).
func sbFactory(haircuts, seed uint64, rate uint32, self chan message, room chan<- message) {
	random := bigRandom{seed}
	seen := make([]bool, haircuts)
	var c sbCounts
	for m := range self {
		switch m := m.(type) {
		case sbStartMsg:
			for i := uint64(0); i < haircuts; i++ {
				// At most Wait, StartCut and DoneCut at once (or one Full): no sender waits on it.
				customer := make(chan message, 3)
				go sbCustomer(i, customer, self)
				c.customers++
				room <- sbEnterMsg{customer}
				c.factoryWork.add(sbDraw(&random, rate))
			}
		case sbReturnedMsg:
			c.returned++
			room <- sbEnterMsg{m.customer}
		case sbCustomerDoneMsg:
			c.served++
			if m.id >= uint64(len(seen)) || seen[m.id] {
				c.repeated++
			} else {
				seen[m.id] = true
			}
			if m.starts != 1 || m.dones != 1 {
				c.servedWrong++
			}
			c.customerStarts += m.starts
			c.customerDones += m.dones
			c.customerFulls += m.fulls
			c.customerWaits += m.waits
			if c.served == haircuts {
				room <- sbExitRoomMsg{c}
				return
			}
		}
	}
}

// savina_barber: the barber, the room and the factory made under the clock (as Savina's
// runIteration), then Start; the run ends when the barber has the Exit. 3 + 7*haircuts +
// 3*turned_away messages, as their receivers counted them, the turned-away customers the
// schedule's (the metrics attempts, turned_away and barber_wakes, the room's counts). The room's
// mailbox holds an Enter from every customer, a Next and the Exit, so that its Next to itself, and
// every sender, never waits on it; the customers' Returned and Done may wait on the factory's,
// which waits on none. Differences as ours (the synthetic work, no Wait to the barber, the Exit
// handed over once the barber sleeps, the customers' counts with their Done, ids their ordinals).
func savinaBarber(haircuts, seats, productionRate, haircutRate, seed int64) result {
	done := make(chan sbCounts)
	start := time.Now()
	barber := make(chan message, 2) // one customer at a time, then the Exit
	room := make(chan message, haircuts+2)
	factory := make(chan message, mailboxCapacity) // Start, the customers' Returned and Done
	go sbBarber(uint64(seed), uint32(haircutRate), barber, room, done)
	go sbRoom(uint64(seats), room, barber)
	go sbFactory(uint64(haircuts), uint64(seed), uint32(productionRate), factory, room)
	factory <- sbStartMsg{}
	c := <-done
	elapsed := time.Since(start).Nanoseconds()
	return result{
		ElapsedNs: max64(elapsed, 1),
		Messages: int64(1 + c.enters + c.customerFulls + c.returned + c.nexts + c.customerWaits + c.haircuts +
			c.customerStarts + c.customerDones + c.served + 2),
		Answer: fmt.Sprintf("customers=%d haircuts=%d served=%d served_wrong=%d repeated=%d accounting_errors=%d "+
			"factory_work_units=%d factory_work_sum=%d barber_work_units=%d barber_work_sum=%d",
			c.customers, c.haircuts, c.served, c.servedWrong, c.repeated, sbAccountingErrors(&c),
			c.factoryWork.units, c.factoryWork.sum, c.barberWork.units, c.barberWork.sum),
		Metrics: map[string]float64{"attempts": float64(c.enters), "turned_away": float64(c.full),
			"barber_wakes": float64(c.wakes)},
	}
}
