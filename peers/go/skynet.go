// skynet: spawn a tree of goroutines over leaves [0, leaves), each node
// having min(branching, count) children; every goroutine but the root sends
// one report (sum, agents) to its parent over the parent's channel.
// Measures spawning the whole tree and gathering its reports at the root.
//
// Protocol: stdin {"kernel":"skynet","params":{"leaves","branching","threads"}};
// stdout {"elapsed_ns","messages","answer":"sum=S agents=A","metrics"}.
package main

import (
	"fmt"
	"time"
)

// report is what a node sends to its parent, by value.
type report struct {
	sum, agents int64
}

// node covers count leaves starting at first and reports to out.
func node(first, count, branching int64, out chan<- report) {
	if count == 1 {
		out <- report{first, 1}
		return
	}
	children := branching
	if count < children {
		children = count
	}
	// One channel per parent, sized so children never block on send.
	ch := make(chan report, children)
	base, extra := count/children, count%children
	start := first
	for i := int64(0); i < children; i++ {
		n := base
		if i < extra {
			n++
		}
		go node(start, n, branching, ch)
		start += n
	}
	total := report{0, 1}
	for i := int64(0); i < children; i++ {
		r := <-ch
		total.sum += r.sum
		total.agents += r.agents
	}
	out <- total
}

func skynet(leaves, branching int64) result {
	root := make(chan report, 1)
	start := time.Now()
	go node(0, leaves, branching, root)
	r := <-root
	elapsed := time.Since(start).Nanoseconds()
	return result{
		ElapsedNs:     elapsed,
		Messages:      r.agents - 1,
		Answer:        fmt.Sprintf("sum=%d agents=%d", r.sum, r.agents),
		AgentsCreated: r.agents,
		Metrics: map[string]float64{
			"agents":       float64(r.agents),
			"ns_per_agent": float64(elapsed) / float64(r.agents),
		},
	}
}
