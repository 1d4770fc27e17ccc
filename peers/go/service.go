// service: a service under an open-loop load, as our kernel (native/kernels/service). A
// generator (the main goroutine) sends `requests` requests on a fixed schedule of `rate` per
// second to `servers` server goroutines, each request costing its server work_ns (spin or
// sleep); every answer goes to one collector goroutine, which records its latency from when the
// request was DUE, not when it was sent, into a histogram of ours (2 significant digits), so a
// late generator cannot hide the queueing its lateness caused. A latency percentile is left out
// where more of the sends were later than late_bound_us than lie above it (p99: 1%; the max:
// any), as ours (service.hpp, kPercentiles); more than half late and the generator fell behind:
// no percentile at all.
//
// Differences from ours: the Poisson gaps and the random routing come from Go's math/rand seeded
// with `seed` (the same distribution, another sequence than our mt19937_64); the generator is a
// goroutine, inside the runtime, where ours is a thread outside it; each goroutine's mailbox is a
// bounded channel (serviceMailbox; ours are unbounded): past saturation a full one makes the
// generator wait, which counts as its lag, so such a point is refused as generator_behind.
package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"runtime"
	"time"
)

// serviceMailbox bounds what the channels hold at once: at most about 2^20 requests over all the
// servers' mailboxes (at least 256 each), and the run's requests when they are fewer.
func serviceMailbox(requests, servers int64) int64 {
	c := int64(1<<20) / servers
	if c < 256 {
		c = 256
	}
	if c > requests {
		c = requests
	}
	return c
}

// behindLateShare: past this share of late sends the point is no latency figure at all.
const behindLateShare = 0.5

// histogram is our Histogram (HdrHistogram's layout): values 0..highest in power-of-two buckets
// of linear sub-buckets, 2 significant digits; record is a leading-zeros count, a shift and an
// increment, with no allocation.
type histogram struct {
	highest            int64
	halfCountMagnitude int
	subBucketHalfCount int64
	subBucketMask      uint64
	counts             []uint64
	total              uint64
	max                int64
}

func newHistogram(digits int, highest int64) *histogram {
	largestSingleUnit := uint64(2 * math.Pow(10, float64(digits)))
	countMagnitude := bits.Len64(largestSingleUnit - 1)
	h := &histogram{highest: highest, halfCountMagnitude: countMagnitude - 1}
	subBucketCount := int64(1) << countMagnitude
	h.subBucketHalfCount = subBucketCount / 2
	h.subBucketMask = uint64(subBucketCount - 1)
	buckets := 1
	for untrackable := subBucketCount; untrackable <= highest; untrackable <<= 1 {
		buckets++
	}
	h.counts = make([]uint64, (buckets+1)*int(h.subBucketHalfCount))
	return h
}

func (h *histogram) bucketOf(v uint64) int {
	return 64 - h.halfCountMagnitude - 1 - bits.LeadingZeros64(v|h.subBucketMask)
}

func (h *histogram) indexOf(value int64) int {
	v := uint64(value)
	bucket := h.bucketOf(v)
	sub := int64(v >> uint(bucket))
	return int(((int64(bucket) + 1) << uint(h.halfCountMagnitude)) + sub - h.subBucketHalfCount)
}

func (h *histogram) valueOf(index int) int64 {
	bucket := int64(index>>uint(h.halfCountMagnitude)) - 1
	sub := int64(index&int(h.subBucketHalfCount-1)) + h.subBucketHalfCount
	if bucket < 0 {
		sub -= h.subBucketHalfCount
		bucket = 0
	}
	return sub << uint(bucket)
}

func (h *histogram) record(value int64) {
	if value > h.max {
		h.max = value
	}
	if value < 0 {
		value = 0
	} else if value > h.highest {
		value = h.highest
	}
	h.counts[h.indexOf(value)]++
	h.total++
}

// buckets: [lowest value, count] of each bucket that counted a value, lowest first (the sample's
// histogram, as ours).
func (h *histogram) buckets() [][2]int64 {
	var out [][2]int64
	for i, c := range h.counts {
		if c > 0 {
			out = append(out, [2]int64{h.valueOf(i), int64(c)})
		}
	}
	return out
}

// valueAtPercentile: the highest value equivalent to the ceil(p/100*count)-th smallest (at least
// the first), capped at the exact max; 0 when empty.
func (h *histogram) valueAtPercentile(p float64) int64 {
	if h.total == 0 {
		return 0
	}
	p = math.Max(0, math.Min(100, p))
	rank := uint64(math.Ceil(p / 100 * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lowest := h.valueOf(i)
			highestEq := lowest + (int64(1) << uint(h.bucketOf(uint64(lowest)))) - 1
			if highestEq > h.max {
				return h.max
			}
			return highestEq
		}
	}
	return h.max
}

type serviceRequest struct {
	id    int64
	dueNs int64 // ns since the run's clock origin
}

type serviceDone struct {
	answer     string
	latency    *histogram
	lastAnswer time.Time
}

// collector counts each answer by id (a byte per id) and records its latency from its due time.
func collector(requests int64, origin time.Time, replies <-chan serviceRequest, done chan<- serviceDone) {
	seen := make([]uint8, requests)
	latency := newHistogram(2, int64(1)<<40)
	var answered, unknown, idSum int64
	var last time.Time
	for answered < requests {
		r := <-replies
		last = time.Now()
		latency.record(int64(last.Sub(origin)) - r.dueNs)
		answered++
		if r.id >= 0 && r.id < requests {
			if seen[r.id] < 255 {
				seen[r.id]++
			}
			idSum += r.id
		} else {
			unknown++
		}
	}
	var missing, repeated int64
	for _, t := range seen {
		if t == 0 {
			missing++
		} else {
			repeated += int64(t) - 1
		}
	}
	done <- serviceDone{
		answer:     serviceAnswer(requests, answered, repeated, missing, unknown, idSum),
		latency:    latency,
		lastAnswer: last,
	}
}

func serviceAnswer(requests, answered, repeated, missing, unknown, idSum int64) string {
	return fmt.Sprintf("requests=%d answered=%d repeated=%d missing=%d unknown=%d id_sum=%d",
		requests, answered, repeated, missing, unknown, idSum)
}

// serve spends workNs on the CPU (spin) or asleep.
func serve(workNs int64, sleep bool) {
	if workNs == 0 {
		return
	}
	if sleep {
		time.Sleep(time.Duration(workNs))
		return
	}
	until := time.Now().Add(time.Duration(workNs))
	for time.Now().Before(until) {
	}
}

func server(workNs int64, sleep bool, in <-chan serviceRequest, replies chan<- serviceRequest) {
	for r := range in {
		serve(workNs, sleep)
		replies <- r
	}
}

// waitUntil sleeps until 2 ms before due, then spins on the clock, yielding its P at each turn;
// returns when it went on. Go 1.19's timers wake a sleeper through epoll_pwait, whose timeout is
// whole milliseconds: a sleep of 100 us took about 1 ms here (the generator's p99 lag at 10,000/s
// was 0.96 ms, half its sends late, when it slept until 100 us before due as ours then did). The
// yield lets the servers and the collector run on the generator's P while it waits (with
// GOMAXPROCS = 1 a spinning goroutine kept them off until the runtime preempted it, 10 ms later).
func waitUntil(due time.Time) time.Time {
	const spin = 2 * time.Millisecond
	now := time.Now()
	if due.Sub(now) > 2*spin {
		time.Sleep(due.Add(-spin).Sub(now))
		now = time.Now()
	}
	for now.Before(due) {
		runtime.Gosched()
		now = time.Now()
	}
	return now
}

// histogramRecordNs: the mean cost of one record, measured in the run as ours.
func histogramRecordNs() float64 {
	const records = 200000
	scratch := newHistogram(2, int64(1)<<40)
	start := time.Now()
	for i := int64(0); i < records; i++ {
		scratch.record((i*7919)%5000000 + 1)
	}
	elapsed := time.Since(start)
	if scratch.total != records {
		panic("histogram lost a record")
	}
	return float64(elapsed.Nanoseconds()) / records
}

type serviceParams struct {
	requests, seed, servers, workNs, lateBoundNs int64
	rate                                         float64
	poisson, sleep                               bool
	routing                                      string
}

func runService(p serviceParams) result {
	// The schedule first, outside the phase: when each request is due and its server.
	due := make([]int64, p.requests)
	to := make([]int32, p.requests)
	arrivals := rand.New(rand.NewSource(p.seed))
	routing := rand.New(rand.NewSource(p.seed ^ 0x1e3779b97f4a7c15))
	at := 0.0
	for i := int64(0); i < p.requests; i++ {
		if !p.poisson {
			at = float64(i) / p.rate
		} else if i > 0 {
			at += arrivals.ExpFloat64() / p.rate
		}
		due[i] = int64(at * 1e9)
		switch p.routing {
		case "round_robin":
			to[i] = int32(i % p.servers)
		case "random":
			to[i] = int32(routing.Int63n(p.servers))
		}
	}

	start := time.Now()
	replies := make(chan serviceRequest, serviceMailbox(p.requests, 1))
	done := make(chan serviceDone, 1)
	inboxes := make([]chan serviceRequest, p.servers)
	for s := range inboxes {
		inboxes[s] = make(chan serviceRequest, serviceMailbox(p.requests, p.servers))
		go server(p.workNs, p.sleep, inboxes[s], replies)
	}
	origin := time.Now()
	go collector(p.requests, origin, replies, done)

	lag := newHistogram(2, int64(1)<<40)
	var late int64
	for i := int64(0); i < p.requests; i++ {
		d := origin.Add(time.Duration(due[i]))
		lagNs := int64(waitUntil(d).Sub(d))
		if lagNs < 1 {
			lag.record(1)
		} else {
			lag.record(lagNs)
		}
		if lagNs > p.lateBoundNs {
			late++
		}
		inboxes[to[i]] <- serviceRequest{i, due[i]}
	}
	lastSend := time.Now()
	d := <-done
	elapsed := time.Since(start).Nanoseconds()
	for _, in := range inboxes {
		close(in)
	}

	lateShare := float64(late) / float64(p.requests)
	behind := lateShare > behindLateShare
	metrics := map[string]float64{"generator_behind": 0}
	if behind {
		metrics["generator_behind"] = 1
	}
	// Percentile q stands where the late sends are at most the share above it (counted exactly).
	for _, pc := range []struct {
		name     string
		q        float64
		perMille int64 // the share of the sends above it, in thousandths
	}{{"latency_p50_ns", 50, 500}, {"latency_p90_ns", 90, 100}, {"latency_p99_ns", 99, 10},
		{"latency_p999_ns", 99.9, 1}, {"latency_max_ns", 100, 0}} {
		if behind || late*1000 > pc.perMille*p.requests {
			continue
		}
		if pc.q == 100 {
			metrics[pc.name] = float64(d.latency.max)
		} else {
			metrics[pc.name] = float64(d.latency.valueAtPercentile(pc.q))
		}
	}
	metrics["generator_lag_p99_ns"] = float64(lag.valueAtPercentile(99))
	lagMax := lag.max
	if lagMax < 1 {
		lagMax = 1
	}
	metrics["generator_lag_max_ns"] = float64(lagMax)
	metrics["generator_late_share"] = lateShare
	if span := lastSend.Sub(origin).Nanoseconds(); p.requests > 1 && span > 0 {
		metrics["sent_per_s"] = float64(p.requests-1) * 1e9 / float64(span)
	}
	if span := d.lastAnswer.Sub(origin).Nanoseconds(); span > 0 {
		metrics["answered_per_s"] = float64(p.requests) * 1e9 / float64(span)
	}
	metrics["histogram_record_ns"] = histogramRecordNs()
	if elapsed < 1 {
		elapsed = 1
	}
	return result{ElapsedNs: elapsed, Messages: 2 * p.requests, Answer: d.answer, Metrics: metrics,
		Histogram: d.latency.buckets()}
}
