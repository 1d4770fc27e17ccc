// Command labctl-go-peer runs one labctl benchmark kernel (skynet, ping_pong or one of
// Savina's seven micro benchmarks) on the Go runtime and reports how long it took.
//
// Protocol: labctl writes one JSON request {"kernel": ..., "params": {...}}
// on stdin; the program runs the kernel once and prints one JSON line
// {"elapsed_ns", "messages", "answer", "metrics"} on stdout, exit 0.
// Bad input: a one-line message on stderr, nothing on stdout, exit 2.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
)

// request is the JSON object labctl writes on stdin.
type request struct {
	Kernel string                     `json:"kernel"`
	Params map[string]json.RawMessage `json:"params"`
}

// result is the JSON object printed on stdout.
type result struct {
	ElapsedNs int64              `json:"elapsed_ns"`
	Messages  int64              `json:"messages"`
	Answer    string             `json:"answer"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
}

// param describes one integer parameter: its default and allowed range.
type param struct {
	def, min, max int64
}

// kernels lists each kernel's parameters and the function that runs it.
var kernels = map[string]struct {
	params map[string]param
	run    func(p map[string]int64) result
}{
	"skynet": {
		params: map[string]param{
			"leaves":    {1000000, 1, 100000000},
			"branching": {10, 2, 1000000},
			"threads":   {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return skynet(p["leaves"], p["branching"]) },
	},
	"ping_pong": {
		params: map[string]param{
			"messages":        {10000000, 2, 10000000000},
			"latency_samples": {10000, 0, 10000000},
			"threads":         {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return pingPong(p["messages"], p["latency_samples"]) },
	},
	"savina_pingpong": {
		params: map[string]param{
			"pings":   {40000, 1, 1000000000},
			"threads": {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaPingPong(p["pings"]) },
	},
	"savina_count": {
		params: map[string]param{
			"increments": {1000000, 0, 10000000000},
			"threads":    {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaCount(p["increments"]) },
	},
	"savina_fjthrput": {
		params: map[string]param{
			"messages": {10000, 1, 1000000000},
			"actors":   {60, 1, 1000000},
			"threads":  {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaFjThrput(p["messages"], p["actors"]) },
	},
	"savina_fjcreate": {
		params: map[string]param{
			"workers": {40000, 1, 100000000},
			"threads": {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaFjCreate(p["workers"]) },
	},
	"savina_threadring": {
		params: map[string]param{
			"actors":  {100, 1, 1000000},
			"pings":   {100000, 0, 10000000000},
			"threads": {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaThreadRing(p["actors"], p["pings"]) },
	},
	"savina_chameneos": {
		params: map[string]param{
			"creatures": {100, 2, 1000000},
			"meetings":  {200000, 0, 1000000000},
			"threads":   {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaChameneos(p["creatures"], p["meetings"]) },
	},
	"savina_big": {
		params: map[string]param{
			"actors":  {120, 1, 1000000},
			"pings":   {20000, 0, 1000000000},
			"seed":    {0, 0, 1000000000},
			"threads": {1, 1, 1024},
		},
		run: func(p map[string]int64) result { return savinaBig(p["actors"], p["pings"], p["seed"]) },
	},
}

// fail reports bad input on stderr and exits with status 2.
func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "labctl-go-peer: "+format+"\n", args...)
	os.Exit(2)
}

// parse reads and validates the request; it exits via fail on bad input.
func parse(input []byte) (string, map[string]int64) {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	var req request
	if err := dec.Decode(&req); err != nil {
		fail("bad request: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		fail("bad request: trailing data after the JSON object")
	}
	k, ok := kernels[req.Kernel]
	if !ok {
		fail("unknown kernel %q", req.Kernel)
	}
	for name := range req.Params {
		if _, ok := k.params[name]; !ok {
			fail("unknown param %q for kernel %s", name, req.Kernel)
		}
	}
	values := make(map[string]int64, len(k.params))
	for name, spec := range k.params {
		v := spec.def
		if raw, given := req.Params[name]; given {
			var n json.Number
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			var x interface{}
			if err := d.Decode(&x); err != nil {
				fail("param %s: %v", name, err)
			}
			if n, ok = x.(json.Number); !ok {
				fail("param %s must be an integer, got %s", name, raw)
			}
			var err error
			if v, err = n.Int64(); err != nil {
				fail("param %s must be an integer, got %s", name, raw)
			}
		}
		if v < spec.min || v > spec.max {
			fail("param %s=%d out of range [%d, %d]", name, v, spec.min, spec.max)
		}
		values[name] = v
	}
	if m, ok := values["messages"]; ok && m%2 != 0 {
		fail("param messages=%d must be even", m)
	}
	return req.Kernel, values
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	if len(strings.TrimSpace(string(input))) == 0 {
		fail("empty request on stdin")
	}
	name, params := parse(input)
	runtime.GOMAXPROCS(int(params["threads"]))
	res := kernels[name].run(params)
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(os.Stderr, "labctl-go-peer: encoding result: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

// percentile returns sorted[min(int(p*(n-1)+0.5), n-1)], or 0 if empty.
func percentile(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(p*float64(n-1) + 0.5)
	if i > n-1 {
		i = n - 1
	}
	return sorted[i]
}

// sortInt64s sorts a slice of int64 in increasing order.
func sortInt64s(s []int64) {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
}
