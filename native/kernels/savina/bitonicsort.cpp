// savina_bitonicsort: Savina's 30. Bitonic Sort (bitonicsort). A source sends `values` values
// through Savina's bitonic sorting network built of agents: merge stages of steps, each step a
// splitter handing blocks to partition agents (each a splitter, compare-exchange agents, a
// joiner and an adapter) or to compare-exchange agents, and a joiner putting the blocks back in
// order; a validation agent receives the values sorted. Measures a large network of agents whose
// handlers mostly forward one value each.
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "radixsort.hpp"

namespace labctl::kernels::savina_bitonicsort {
namespace {

using savina_radixsort::describe;
using savina_radixsort::SortedStream;
using savina_radixsort::stream_of;

struct Setup {
    std::uint32_t values;
    std::uint64_t max_value;
    std::uint64_t seed;
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("values")), std::uint64_t(params.integer("max_value")),
            std::uint64_t(params.integer("seed"))};
}

// -- the sequential program ---------------------------------------------------------------------

// Savina's CompareExchangeActor on two places: the smaller first when up, the larger when down.
inline void compare_exchange(std::vector<std::uint64_t>& a, std::size_t i, std::size_t j, bool up) noexcept {
    if ((a[j] < a[i]) == up && a[i] != a[j]) std::swap(a[i], a[j]);
}

// One step: blocks of `length`, each a half-cleaner (place k against k + length/2), sorting up
// where (start / direction_block) is even (direction_block 0: every block up).
void step(std::vector<std::uint64_t>& a, std::size_t length, std::size_t direction_block) {
    const std::size_t half = length / 2;
    for (std::size_t start = 0; start < a.size(); start += length) {
        const bool up = direction_block == 0 || (start / direction_block) % 2 == 0;
        for (std::size_t k = 0; k < half; ++k) compare_exchange(a, start + k, start + k + half, up);
    }
}

// The sequential program: the same network's compare-exchanges, step by step, in one thread:
// merge stages of order 2, 4, ..., values/2 (steps of length P, P/2, ..., 2, blocks of P
// alternately up and down), then the last merge stage (steps of length values, ..., 2, up).
std::vector<std::uint64_t> bitonic_sort(std::vector<std::uint64_t> a) {
    const std::size_t n = a.size();
    for (std::size_t order = 2; order <= n / 2; order *= 2)
        for (std::size_t length = order; length >= 2; length /= 2) step(a, length, order);
    for (std::size_t length = n; length >= 2; length /= 2) step(a, length, 0);
    return a;
}

// -- the network's size ------------------------------------------------------------------------

// Agents, the messages each value makes (the agents it passes), and the Exit messages beyond one
// per agent (a joiner gets one from each of its inputs).
struct Size {
    std::uint64_t agents = 0;
    std::uint64_t hops = 0;
    std::uint64_t extra_exits = 0;
    Size& operator+=(const Size& s) {
        agents += s.agents;
        hops += s.hops;
        extra_exits += s.extra_exits;
        return *this;
    }
};

// A step's worker: a partition (its agent, splitter, length/2 compare-exchanges, joiner, adapter;
// a value passes five of them) or, for length 2, one compare-exchange.
Size worker_size(std::uint64_t length) {
    if (length == 2) return {1, 1, 0};
    return {length / 2 + 4, 5, length / 2 - 1};
}

// A step: its agent, splitter, joiner (and, last stage excepted, adapter) and its workers.
Size step_size(std::uint64_t length, std::uint64_t partitions, bool last_stage) {
    const Size w = worker_size(length);
    const std::uint64_t own = last_stage ? 3 : 4;
    return {own + partitions * w.agents, own + w.hops, partitions - 1 + partitions * w.extra_exits};
}

Size network_size(std::uint64_t n) {
    Size total{4, 3, 0};  // the kernel agent, source, adapter, validation; a value passes three
    for (std::uint64_t order = 2; order <= n / 2; order *= 2) {
        total += {1, 1, 0};  // the merge stage's agent
        for (std::uint64_t i = order / 2; i >= 1; i /= 2) total += step_size(order / i, (n / order) * i, false);
    }
    total += {1, 1, 0};  // the last merge stage's agent
    for (std::uint64_t i = n / 2; i >= 1; i /= 2) total += step_size(n / i, i, true);
    return total;
}

// Start, every value through the network, an Exit into every agent but the source (and one more
// into a joiner per input beyond the first).
std::uint64_t messages(std::uint64_t n) {
    const Size s = network_size(n);
    return 1 + n * s.hops + (s.agents - 1) + s.extra_exits;
}

// -- the agents -----------------------------------------------------------------------------------

struct Start {};
struct Value {
    std::uint64_t value;
};
struct Data {
    std::uint32_t order;
    std::uint64_t value;
};
// Savina's ExitMessage, carrying the messages the agents it passed handled (a splitter's count
// rides on the Exit to its first receiver, so each agent's is counted once).
struct Exit {
    std::uint64_t handled;
};

struct Outcome {
    SortedStream stream;
    std::uint64_t handled = 0;
};

// Every agent of the network: started before the phase, counting the messages it handles.
class Node : public rt::Agent {
public:
    explicit Node(StartLatch& started) : started_(started) {}

protected:
    std::uint64_t handled_ = 0;

private:
    void on_start() override { started_.count_down(); }
    StartLatch& started_;
};

// The agents of Savina's kernel, merge stage, step and partition actors: each forwards what it
// gets to its first step or its splitter.
class Forward final : public Node {
public:
    Forward(StartLatch& started, rt::Agent& next) : Node(started), next_(next) {
        subscribe<&Forward::on_value>();
        subscribe<&Forward::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        rt::send<Value>(next_, v.value);
    }
    void on_exit(const Exit& e) { rt::send<Exit>(next_, e.handled + ++handled_); }

    rt::Agent& next_;
};

// Savina's ValueDataAdapterActor: a partition's output, tagged with the partition's place.
class ValueToData final : public Node {
public:
    ValueToData(StartLatch& started, std::uint32_t order, rt::Agent& next) : Node(started), order_(order), next_(next) {
        subscribe<&ValueToData::on_value>();
        subscribe<&ValueToData::on_data>();
        subscribe<&ValueToData::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        rt::send<Data>(next_, order_, v.value);
    }
    void on_data(const Data& d) {
        ++handled_;
        rt::send<Data>(next_, d.order, d.value);
    }
    void on_exit(const Exit& e) { rt::send<Exit>(next_, e.handled + ++handled_); }

    const std::uint32_t order_;
    rt::Agent& next_;
};

// Savina's DataValueAdapterActor: the tag dropped.
class DataToValue final : public Node {
public:
    DataToValue(StartLatch& started, rt::Agent& next) : Node(started), next_(next) {
        subscribe<&DataToValue::on_value>();
        subscribe<&DataToValue::on_data>();
        subscribe<&DataToValue::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        rt::send<Value>(next_, v.value);
    }
    void on_data(const Data& d) {
        ++handled_;
        rt::send<Value>(next_, d.value);
    }
    void on_exit(const Exit& e) { rt::send<Exit>(next_, e.handled + ++handled_); }

    rt::Agent& next_;
};

// Savina's RoundRobinSplitterActor: runs of `length` values to each receiver in turn.
class Splitter final : public Node {
public:
    Splitter(StartLatch& started, std::uint32_t length, std::vector<rt::Agent*> receivers)
        : Node(started), length_(length), receivers_(std::move(receivers)) {
        subscribe<&Splitter::on_value>();
        subscribe<&Splitter::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        rt::send<Value>(*receivers_[receiver_], v.value);
        if (++run_ == length_) {
            receiver_ = (receiver_ + 1) % receivers_.size();
            run_ = 0;
        }
    }
    void on_exit(const Exit& e) {
        std::uint64_t handled = e.handled + ++handled_;
        for (rt::Agent* receiver : receivers_) {
            rt::send<Exit>(*receiver, handled);
            handled = 0;
        }
    }

    const std::uint32_t length_;
    const std::vector<rt::Agent*> receivers_;
    std::size_t receiver_ = 0;
    std::uint32_t run_ = 0;
};

// Savina's RoundRobinJoinerActor: each input's values held in order, forwarded in runs of
// `length` from each input in turn.
class Joiner final : public Node {
public:
    Joiner(StartLatch& started, std::uint32_t length, std::uint32_t inputs, rt::Agent& next)
        : Node(started), length_(length), held_(inputs), next_(next) {
        subscribe<&Joiner::on_data>();
        subscribe<&Joiner::on_exit>();
    }

private:
    // One input's values in arrival order: a vector read from `head`, emptied once read through.
    struct Held {
        std::vector<std::uint64_t> values;
        std::size_t head = 0;
    };

    void on_data(const Data& d) {
        ++handled_;
        if (d.order >= held_.size()) throw std::logic_error("savina_bitonicsort: a joiner got a value from input " +
                                                            std::to_string(d.order) + " of " + std::to_string(held_.size()));
        held_[d.order].values.push_back(d.value);
        for (;;) {
            Held& in = held_[forward_];
            if (in.head == in.values.size()) break;
            rt::send<Value>(next_, in.values[in.head++]);
            if (in.head == in.values.size()) {
                in.values.clear();
                in.head = 0;
            }
            if (++run_ == length_) {
                forward_ = (forward_ + 1) % held_.size();
                run_ = 0;
            }
        }
    }

    void on_exit(const Exit& e) {
        handled_exits_ += e.handled;
        ++handled_;
        if (++exits_ == held_.size()) rt::send<Exit>(next_, handled_exits_ + handled_);
    }

    const std::uint32_t length_;
    std::vector<Held> held_;
    rt::Agent& next_;
    std::size_t forward_ = 0;
    std::uint32_t run_ = 0;
    std::size_t exits_ = 0;
    std::uint64_t handled_exits_ = 0;
};

// Savina's CompareExchangeActor: two values in, the pair out ordered up or down, tagged.
class CompareExchange final : public Node {
public:
    CompareExchange(StartLatch& started, std::uint32_t order, bool up, rt::Agent& next)
        : Node(started), order_(order), up_(up), next_(next) {
        subscribe<&CompareExchange::on_value>();
        subscribe<&CompareExchange::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        if (!holding_) {
            holding_ = true;
            first_ = v.value;
            return;
        }
        holding_ = false;
        const std::uint64_t low = first_ <= v.value ? first_ : v.value;
        const std::uint64_t high = first_ <= v.value ? v.value : first_;
        rt::send<Data>(next_, order_, up_ ? low : high);
        rt::send<Data>(next_, order_, up_ ? high : low);
    }
    void on_exit(const Exit& e) { rt::send<Exit>(next_, e.handled + ++handled_); }

    const std::uint32_t order_;
    const bool up_;
    rt::Agent& next_;
    bool holding_ = false;
    std::uint64_t first_ = 0;
};

// Savina's IntSourceActor: every value, then Exit.
class Source final : public Node {
public:
    Source(StartLatch& started, const std::vector<std::uint64_t>& input, rt::Agent& next)
        : Node(started), input_(input), next_(next) {
        subscribe<&Source::on_go>();
    }

private:
    void on_go(const Start&) {
        ++handled_;
        for (std::uint64_t value : input_) rt::send<Value>(next_, value);
        rt::send<Exit>(next_, handled_);
    }

    const std::vector<std::uint64_t>& input_;
    rt::Agent& next_;
};

// Savina's ValidationActor: the sorted stream, checked as it comes; done at Exit.
class Validation final : public Node {
public:
    Validation(StartLatch& started, rt::Completion<Outcome>& done) : Node(started), done_(done) {
        subscribe<&Validation::on_value>();
        subscribe<&Validation::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        outcome_.stream.add(v.value);
    }
    void on_exit(const Exit& e) {
        outcome_.handled = e.handled + ++handled_;
        done_.set(outcome_);
    }

    rt::Completion<Outcome>& done_;
    Outcome outcome_;
};

// Builds Savina's network in one coop, each agent bound by its own index (active_group spreads
// them), in the order Savina's constructors make them.
class Builder {
public:
    Builder(rt::Coop& coop, DispatcherChoice& dispatchers, StartLatch& started)
        : coop_(coop), dispatchers_(dispatchers), started_(started) {}

    template <class T, class... Args>
    T& make(Args&&... args) {
        return coop_.make_agent_with_binder<T>(dispatchers_.binder(made_++), started_, std::forward<Args>(args)...);
    }

    // Savina's BitonicSortKernelActor: merge stages of order 2, 4, ..., n/2, then the last.
    rt::Agent& kernel(std::uint32_t n, rt::Agent& next) {
        rt::Agent* first = &last_merge_stage(n, next);
        for (std::uint32_t order = n / 2; order >= 2; order /= 2) first = &merge_stage(order, n, *first);
        return make<Forward>(*first);
    }

    unsigned made() const noexcept { return made_; }

private:
    // Savina's MergeStageActor: steps of length order, order/2, ..., 2.
    rt::Agent& merge_stage(std::uint32_t order, std::uint32_t n, rt::Agent& next) {
        rt::Agent* first = &next;
        for (std::uint32_t i = order / 2; i >= 1; i /= 2) first = &step_of_merge(order / i, (n / order) * i, i, *first);
        return make<Forward>(*first);
    }

    // Savina's LastMergeStageActor: steps of length n, n/2, ..., 2, every block up.
    rt::Agent& last_merge_stage(std::uint32_t n, rt::Agent& next) {
        rt::Agent* first = &next;
        for (std::uint32_t i = n / 2; i >= 1; i /= 2) first = &step_of_last_merge(n / i, i, *first);
        return make<Forward>(*first);
    }

    // Savina's StepOfMergeActor: partition i sorts up where (i / direction_counter) is even.
    rt::Agent& step_of_merge(std::uint32_t length, std::uint32_t partitions, std::uint32_t direction_counter,
                             rt::Agent& next) {
        DataToValue& adapter = make<DataToValue>(next);
        Joiner& joiner = make<Joiner>(length, partitions, adapter);
        std::vector<rt::Agent*> workers;
        workers.reserve(partitions);
        for (std::uint32_t i = 0; i < partitions; ++i)
            workers.push_back(&worker(i, length, (i / direction_counter) % 2 == 0, joiner));
        return make<Forward>(make<Splitter>(length, std::move(workers)));
    }

    // Savina's StepOfLastMergeActor: every partition up, its joiner feeding the next step.
    rt::Agent& step_of_last_merge(std::uint32_t length, std::uint32_t partitions, rt::Agent& next) {
        Joiner& joiner = make<Joiner>(length, partitions, next);
        std::vector<rt::Agent*> workers;
        workers.reserve(partitions);
        for (std::uint32_t i = 0; i < partitions; ++i) workers.push_back(&worker(i, length, true, joiner));
        return make<Forward>(make<Splitter>(length, std::move(workers)));
    }

    // A step's worker: Savina's PartitionBitonicSequenceActor (a splitter, length/2
    // compare-exchanges, a joiner, an adapter tagging its output), or for length 2 one
    // compare-exchange.
    rt::Agent& worker(std::uint32_t order, std::uint32_t length, bool up, rt::Agent& joiner) {
        if (length == 2) return make<CompareExchange>(order, up, joiner);
        ValueToData& adapter = make<ValueToData>(order, joiner);
        Joiner& inner = make<Joiner>(1, length / 2, adapter);
        std::vector<rt::Agent*> exchanges;
        exchanges.reserve(length / 2);
        for (std::uint32_t i = 0; i < length / 2; ++i) exchanges.push_back(&make<CompareExchange>(i, up, inner));
        return make<Forward>(make<Splitter>(1, std::move(exchanges)));
    }

    rt::Coop& coop_;
    DispatcherChoice& dispatchers_;
    StartLatch& started_;
    unsigned made_ = 0;
};

Result run(const Params& params) {
    const Setup s = setup(params);
    const std::vector<std::uint64_t> input = savina_radixsort::inputs(s.values, s.max_value, s.seed);
    const Size size = network_size(s.values);

    StartLatch started(std::uint32_t(size.agents));
    MeasuredRun<Outcome> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Source* source = nullptr;
    unsigned made = 0;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        Builder build(coop, dispatchers, started);
        Validation& validation = build.make<Validation>(run.done());
        DataToValue& adapter = build.make<DataToValue>(validation);
        source = &build.make<Source>(input, build.kernel(s.values, adapter));
        made = build.made();
    });
    if (made != size.agents)
        throw std::logic_error("savina_bitonicsort: built " + std::to_string(made) + " agents, counted " +
                               std::to_string(size.agents));
    started.wait(env);
    Result result;

    // From the source's Start to the validation agent's Exit.
    const Outcome outcome = run.measure(result, [&] { rt::send<Start>(*source); });

    result.messages_processed = outcome.handled;
    result.answer = describe(outcome.stream);
    result.expected = describe(savina::timed_sequential(result, [&] { return stream_of(bitonic_sort(input)); }));
    return result;
}

void check(const Params& params) {
    const auto values = std::uint64_t(params.integer("values"));
    if (!std::has_single_bit(values))
        throw ParamError("savina_bitonicsort", "values",
                         "parameter 'values' must be a power of two, 2 to 65,536 (the width of a bitonic "
                         "network); got " + std::to_string(values));
    check_thread_per_agent("savina_bitonicsort", params, network_size(values).agents,
                           "values=" + std::to_string(values));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(stream_of(bitonic_sort(savina_radixsort::inputs(s.values, s.max_value, s.seed)))),
            messages(s.values)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("values", 4'096, {2, 1 << 16},
                      "values sorted, a power of two: the network's width (Savina's N)"),
        {.name = "max_value",
         .type = ParamType::integer,
         .default_value = std::int64_t{1} << 60,
         .help = "the values lie in [0, max_value) (Savina's M)",
         .minimum = 1,
         .maximum = double(std::int64_t{1} << 62)},
        savina_radixsort::seed_param(),
    };
}

const Registration registration(Kernel{
    .name = "savina_bitonicsort",
    .summary = "`values` values through Savina's bitonic sorting network of splitter, "
               "compare-exchange and joiner agents: a large network of forwarding agents",
    .description =
        "Savina's benchmark 30, Bitonic Sort (bitonicsort). A source sends `values` values (a "
        "power of two, n) one message each, then Exit, into Savina's bitonic network, built as "
        "its actors are: merge stages of order 2, 4, ..., n/2 and a last merge stage of order n, "
        "each a chain of steps; a step's splitter hands runs of its length to its workers in turn "
        "and its joiner takes them back in order (through an adapter dropping the tag, but in the "
        "last stage); a worker is a partition (its own splitter dealing the values one by one to "
        "length/2 compare-exchange agents, a joiner collecting their tagged pairs, an adapter "
        "tagging its output with its place) or, for length 2, a compare-exchange agent, which "
        "outputs each pair it gets ordered up or down by the block's direction. Stage, step and "
        "partition agents forward to their first step or splitter. A validation agent receives "
        "the values sorted and ends the run at Exit, which reaches every agent (a joiner passes it "
        "on after one from each input). The phase runs from the source's Start to that Exit; the "
        "network (241,984 agents at Savina's n = 4,096) is made and every agent started before "
        "it, the values drawn before it. Messages: Start, each value into every agent on its path "
        "(4 to 9 per step, 657 in all through the 78 steps at n = 4,096) and an Exit into every "
        "agent but the source, a joiner's one per input (3,092,722 messages at Savina's sizes). The "
        "sequential program (sequential_ns) is the same network's compare-exchanges, step by "
        "step, on an array in one thread. How it scales: most handlers forward one value, so the "
        "runtime's cost per message decides; the steps form a pipeline and a step's workers run "
        "side by side, but every value of a step passes its one splitter and one joiner, so a "
        "pool's two threads help only as far as handing values between threads costs less than "
        "the work; the sequential program, which moves no messages, beats every pool by far. "
        "Differences from Savina: Savina draws its values from its 16-bit PseudoRandom "
        "(abs(nextLong()) % M: every value below 65,536, and, its period being 65,536, no value "
        "repeated up to n = 65,536), ours from SplitMix64 below max_value (at n = 4,096 no "
        "value repeated either); ours are drawn before the phase, Savina's source draws them as it "
        "sends; one agent class stands for Savina's kernel, stage, step and partition actors, "
        "which all forward to their first part; each Exit carries the count of messages the "
        "agents it passed handled, which the validation agent reports; Savina's validation sums "
        "the values as doubles and prints the first out of place, ours counts them, sums them "
        "modulo 2^64 and hashes the multiset and the sequence; Savina's clock also covers making "
        "the actor system and its actors, ours not (making and starting them is not timed); its "
        "actors exit at Exit, ours stay until the environment stops after the phase.",
    .sources = {{"savina", "30. Bitonic Sort (bitonicsort)"}},
    .verifies = "the validation agent received every value, each at least the one before, with the "
                "inputs' sum and multiset hash and the sequence hash of the sequential program's "
                "bitonic network, and every agent handled its share of the messages",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_bitonicsort
