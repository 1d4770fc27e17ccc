// Command labctl-go-peer runs one labctl benchmark kernel (skynet, ping_pong, service, one of
// Savina's seven micro benchmarks or one of its concurrency benchmarks, or the chat of "Run,
// Actor, Run") on the Go runtime and reports how long it took.
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
	// The resident set before the kernel's set-up, and the agents (goroutines) its phase made,
	// where it counts them (0: not counted, left out): labctl's memory per agent.
	RssBeforeKb   int64 `json:"rss_before_kb"`
	AgentsCreated int64 `json:"agents_created,omitempty"`
	// A latency kernel's histogram: [lowest value, count] of each bucket that counted one.
	Histogram [][2]int64 `json:"histogram,omitempty"`
}

// param describes one parameter: an integer's default and allowed range; a real's (real set:
// fdef, fmin, fmax); a choice's default (text) and values; or a boolean's (boolean set: bdef).
type param struct {
	def, min, max    int64
	real             bool
	fdef, fmin, fmax float64
	text             string
	choices          []string
	boolean, bdef    bool
}

// values are a request's parameters, by type.
type values struct {
	ints  map[string]int64
	reals map[string]float64
	texts map[string]string
	flags map[string]bool
}

// kernels lists each kernel's parameters and the function that runs it.
var kernels = map[string]struct {
	params map[string]param
	run    func(p values) result
}{
	"skynet": {
		params: map[string]param{
			"leaves":    {def: 1000000, min: 1, max: 100000000},
			"branching": {def: 10, min: 2, max: 1000000},
			"threads":   {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return skynet(p.ints["leaves"], p.ints["branching"]) },
	},
	"ping_pong": {
		params: map[string]param{
			"messages":        {def: 10000000, min: 2, max: 10000000000},
			"latency_samples": {def: 10000, min: 0, max: 10000000},
			"threads":         {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return pingPong(p.ints["messages"], p.ints["latency_samples"]) },
	},
	"savina_pingpong": {
		params: map[string]param{
			"pings":   {def: 40000, min: 1, max: 1000000000},
			"threads": {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaPingPong(p.ints["pings"]) },
	},
	"savina_count": {
		params: map[string]param{
			"increments": {def: 1000000, min: 0, max: 10000000000},
			"threads":    {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaCount(p.ints["increments"]) },
	},
	"service": {
		params: map[string]param{
			"requests":      {def: 100000, min: 1, max: 100000000},
			"rate":          {real: true, fdef: 100000, fmin: 1, fmax: 1e9},
			"arrivals":      {text: "constant", choices: []string{"constant", "poisson"}},
			"seed":          {def: 1, min: 0, max: 4611686018427387904},
			"servers":       {def: 4, min: 1, max: 10000},
			"routing":       {text: "round_robin", choices: []string{"round_robin", "random", "hot"}},
			"work":          {text: "spin", choices: []string{"spin", "sleep"}},
			"work_ns":       {def: 0, min: 0, max: 1000000000},
			"late_bound_us": {def: 100, min: 1, max: 1000000},
			"threads":       {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return runService(serviceParams{
				requests: p.ints["requests"], seed: p.ints["seed"], servers: p.ints["servers"],
				workNs: p.ints["work_ns"], lateBoundNs: p.ints["late_bound_us"] * 1000,
				rate: p.reals["rate"], poisson: p.texts["arrivals"] == "poisson",
				sleep: p.texts["work"] == "sleep", routing: p.texts["routing"],
			})
		},
	},
	"savina_fjthrput": {
		params: map[string]param{
			"messages": {def: 10000, min: 1, max: 1000000000},
			"actors":   {def: 60, min: 1, max: 1000000},
			"threads":  {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaFjThrput(p.ints["messages"], p.ints["actors"]) },
	},
	"savina_fjcreate": {
		params: map[string]param{
			"workers": {def: 40000, min: 1, max: 100000000},
			"threads": {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaFjCreate(p.ints["workers"]) },
	},
	"savina_threadring": {
		params: map[string]param{
			"actors":  {def: 100, min: 1, max: 1000000},
			"pings":   {def: 100000, min: 0, max: 10000000000},
			"threads": {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaThreadRing(p.ints["actors"], p.ints["pings"]) },
	},
	"savina_chameneos": {
		params: map[string]param{
			"creatures": {def: 100, min: 2, max: 1000000},
			"meetings":  {def: 200000, min: 0, max: 1000000000},
			"threads":   {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaChameneos(p.ints["creatures"], p.ints["meetings"]) },
	},
	"savina_big": {
		params: map[string]param{
			"actors":  {def: 120, min: 1, max: 1000000},
			"pings":   {def: 20000, min: 0, max: 1000000000},
			"seed":    {def: 0, min: 0, max: 1000000000},
			"threads": {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaBig(p.ints["actors"], p.ints["pings"], p.ints["seed"]) },
	},
	"chat": {
		params: map[string]param{
			"clients":         {def: 1024, min: 2, max: 1000000},
			"directories":     {def: 8, min: 1, max: 500000},
			"turns":           {def: 32, min: 1, max: 1000000},
			"iterations":      {def: 32, min: 1, max: 100000},
			"compute":         {def: 55, min: 0, max: 100},
			"post":            {def: 25, min: 0, max: 100},
			"leave":           {def: 10, min: 0, max: 100},
			"invite":          {def: 10, min: 0, max: 100},
			"befriend":        {def: 10, min: 0, max: 100},
			"seed":            {def: 42, min: 0, max: 1000000000},
			"buffering":       {boolean: true, bdef: true},
			"compute_repeats": {def: 10000, min: 0, max: 100000000},
			"threads":         {def: 1, min: 1, max: 1024},
		},
		run: runChat,
	},
	"savina_logmap": {
		params: map[string]param{
			"terms":      {def: 25000, min: 1, max: 100000000},
			"series":     {def: 10, min: 1, max: 100000},
			"start_rate": {real: true, fdef: 3.46, fmin: 0, fmax: 4},
			"increment":  {real: true, fdef: 0.0025, fmin: 0, fmax: 1},
			"threads":    {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaLogmap(p.ints["terms"], p.ints["series"], p.reals["start_rate"], p.reals["increment"])
		},
	},
	"savina_banking": {
		params: map[string]param{
			"accounts":     {def: 1000, min: 10, max: 1000000},
			"transactions": {def: 50000, min: 0, max: 100000000},
			"seed":         {def: 123456, min: 0, max: 4294967295},
			"threads":      {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaBanking(p.ints["accounts"], p.ints["transactions"], p.ints["seed"])
		},
	},
	"savina_cigsmok": {
		params: map[string]param{
			"rounds":  {def: 1000, min: 1, max: 100000000},
			"smokers": {def: 200, min: 1, max: 1000000},
			"seed":    {def: 0, min: 0, max: 4294967295},
			"threads": {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaCigsmok(p.ints["rounds"], p.ints["smokers"], p.ints["seed"]) },
	},
	"savina_philosopher": {
		params: map[string]param{
			"philosophers": {def: 20, min: 1, max: 1000000},
			"rounds":       {def: 10000, min: 1, max: 1000000000},
			"threads":      {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result { return savinaPhilosopher(p.ints["philosophers"], p.ints["rounds"]) },
	},
	"savina_barber": {
		params: map[string]param{
			"haircuts":        {def: 5000, min: 1, max: 10000000},
			"seats":           {def: 1000, min: 1, max: 10000000},
			"production_rate": {def: 1000, min: 1, max: 65536},
			"haircut_rate":    {def: 1000, min: 1, max: 65536},
			"seed":            {def: 74755, min: 0, max: 4294967295},
			"threads":         {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaBarber(p.ints["haircuts"], p.ints["seats"], p.ints["production_rate"],
				p.ints["haircut_rate"], p.ints["seed"])
		},
	},
	"savina_bndbuffer": {
		params: map[string]param{
			"buffer_size":        {def: 50, min: 2, max: 10000000},
			"producers":          {def: 40, min: 1, max: 100000},
			"consumers":          {def: 40, min: 1, max: 100000},
			"items_per_producer": {def: 1000, min: 0, max: 100000000},
			"produce_cost":       {def: 25, min: 0, max: 100000},
			"consume_cost":       {def: 25, min: 0, max: 100000},
			"threads":            {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaBndbuffer(p.ints["buffer_size"], p.ints["producers"], p.ints["consumers"],
				p.ints["items_per_producer"], p.ints["produce_cost"], p.ints["consume_cost"])
		},
	},
	"savina_concdict": {
		params: map[string]param{
			"workers":             {def: 20, min: 1, max: 10000},
			"messages_per_worker": {def: 10000, min: 0, max: 1000000000},
			"write_percent":       {def: 10, min: 0, max: 100},
			"keys":                {def: 524287, min: 1, max: 100000000},
			"seed":                {def: 1, min: 0, max: 4294967295},
			"threads":             {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaConcdict(p.ints["workers"], p.ints["messages_per_worker"], p.ints["write_percent"],
				p.ints["keys"], p.ints["seed"])
		},
	},
	"savina_concsll": {
		params: map[string]param{
			"workers":             {def: 20, min: 1, max: 10000},
			"messages_per_worker": {def: 8000, min: 0, max: 100000000},
			"write_percent":       {def: 10, min: 0, max: 100},
			"size_percent":        {def: 1, min: 0, max: 100},
			"seed":                {def: 1, min: 0, max: 4294967295},
			"threads":             {def: 1, min: 1, max: 1024},
		},
		run: func(p values) result {
			return savinaConcsll(p.ints["workers"], p.ints["messages_per_worker"], p.ints["write_percent"],
				p.ints["size_percent"], p.ints["seed"])
		},
	},
}

// fail reports bad input on stderr and exits with status 2.
func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "labctl-go-peer: "+format+"\n", args...)
	os.Exit(2)
}

// parse reads and validates the request; it exits via fail on bad input.
func parse(input []byte) (string, values) {
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
	v := values{ints: map[string]int64{}, reals: map[string]float64{}, texts: map[string]string{},
		flags: map[string]bool{}}
	for name, spec := range k.params {
		raw, given := req.Params[name]
		switch {
		case spec.choices != nil:
			x := spec.text
			if given && json.Unmarshal(raw, &x) != nil {
				x = string(raw)
			}
			known := false
			for _, c := range spec.choices {
				known = known || c == x
			}
			if !known {
				fail("param %s must be one of %s, got %s", name, strings.Join(spec.choices, ", "), raw)
			}
			v.texts[name] = x
		case spec.boolean:
			x := spec.bdef
			if given && json.Unmarshal(raw, &x) != nil {
				fail("param %s must be true or false, got %s", name, raw)
			}
			v.flags[name] = x
		case spec.real:
			x := spec.fdef
			if given {
				if err := json.Unmarshal(raw, &x); err != nil {
					fail("param %s must be a number, got %s", name, raw)
				}
			}
			if !(x >= spec.fmin && x <= spec.fmax) {
				fail("param %s=%g out of range [%g, %g]", name, x, spec.fmin, spec.fmax)
			}
			v.reals[name] = x
		default:
			x := spec.def
			if given {
				x = integer(name, raw)
			}
			if x < spec.min || x > spec.max {
				fail("param %s=%d out of range [%d, %d]", name, x, spec.min, spec.max)
			}
			v.ints[name] = x
		}
	}
	if m, ok := v.ints["messages"]; ok && m%2 != 0 {
		fail("param messages=%d must be even", m)
	}
	return req.Kernel, v
}

// integer decodes an integer parameter; it exits via fail on anything else.
func integer(name string, raw json.RawMessage) int64 {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var x interface{}
	if err := d.Decode(&x); err != nil {
		fail("param %s: %v", name, err)
	}
	n, ok := x.(json.Number)
	if !ok {
		fail("param %s must be an integer, got %s", name, raw)
	}
	v, err := n.Int64()
	if err != nil {
		fail("param %s must be an integer, got %s", name, raw)
	}
	return v
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
	runtime.GOMAXPROCS(int(params.ints["threads"]))
	rssBefore := residentKb()
	res := kernels[name].run(params)
	res.RssBeforeKb = rssBefore
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(os.Stderr, "labctl-go-peer: encoding result: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

// residentKb: the process's resident set in KiB, from /proc/self/statm (its second field, in pages).
func residentKb() int64 {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		fail("reading /proc/self/statm: %v", err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(statm), &size, &resident); err != nil {
		fail("reading /proc/self/statm: %v", err)
	}
	return resident * int64(os.Getpagesize()) / 1024
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
