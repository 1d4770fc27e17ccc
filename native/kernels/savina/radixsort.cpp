// savina_radixsort: Savina's 16. Radix Sort (radixsort). A source sends `values` values below
// `max_value` (a power of two, 2^bits) through a pipeline of `bits` sorting agents, one per bit,
// lowest first, to a validation agent: each stage forwards the values whose bit is clear at once
// and holds the others until it has seen every value, then forwards them (one stable partition
// per bit: a binary LSD radix sort). Measures a long pipeline of tiny stages.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "radixsort.hpp"

namespace labctl::kernels::savina_radixsort {
namespace {

struct Start {};
struct Value {
    std::uint64_t value;
};

struct Setup {
    std::uint64_t values;
    std::uint64_t max_value;
    std::uint64_t seed;
    unsigned bits;  // log2(max_value): the sorting stages
};

Setup setup(const Params& params) {
    const auto max_value = std::uint64_t(params.integer("max_value"));
    return {std::uint64_t(params.integer("values")), max_value, std::uint64_t(params.integer("seed")),
            unsigned(std::countr_zero(max_value))};
}

// The sequential program: the same stable partition per bit, lowest bit first, in one loop: the
// values whose bit is clear in their order, then those whose bit is set in theirs.
std::vector<std::uint64_t> radix_sort(std::vector<std::uint64_t> values, unsigned bits) {
    std::vector<std::uint64_t> ones;
    ones.reserve(values.size());
    for (unsigned bit = 0; bit < bits; ++bit) {
        const std::uint64_t radix = std::uint64_t{1} << bit;
        std::size_t zeros = 0;
        ones.clear();
        for (std::size_t i = 0; i < values.size(); ++i) {
            const std::uint64_t value = values[i];
            if ((value & radix) == 0) values[zeros++] = value;
            else ones.push_back(value);
        }
        for (std::uint64_t value : ones) values[zeros++] = value;
    }
    return values;
}

// Start, then every value once into each stage and once into the validation agent.
std::uint64_t messages(const Setup& s) { return 1 + s.values * (std::uint64_t(s.bits) + 1); }

class Validation final : public rt::Agent {
public:
    Validation(std::uint64_t values, rt::Completion<SortedStream>& done, StartLatch& started)
        : values_(values), done_(done), started_(started) {
        subscribe<&Validation::on_value>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_value(const Value& v) {
        stream_.add(v.value);
        if (stream_.count == values_) done_.set(stream_);
    }

    const std::uint64_t values_;
    rt::Completion<SortedStream>& done_;
    StartLatch& started_;
    SortedStream stream_;
};

// Savina's SortActor: one bit's stable partition.
class SortStage final : public rt::Agent {
public:
    SortStage(std::uint64_t values, std::uint64_t radix, rt::Agent& next, StartLatch& started)
        : values_(values), radix_(radix), next_(next), started_(started) {
        subscribe<&SortStage::on_value>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_value(const Value& v) {
        ++seen_;
        if ((v.value & radix_) == 0) rt::send<Value>(next_, v.value);
        else held_.push_back(v.value);
        if (seen_ != values_) return;
        for (std::uint64_t value : held_) rt::send<Value>(next_, value);
        held_ = {};
    }

    const std::uint64_t values_;
    const std::uint64_t radix_;
    rt::Agent& next_;
    StartLatch& started_;
    std::uint64_t seen_ = 0;
    std::vector<std::uint64_t> held_;
};

// Savina's IntSourceActor: every value, in the order drawn, to the first stage.
class Source final : public rt::Agent {
public:
    Source(const std::vector<std::uint64_t>& input, rt::Agent& first, StartLatch& started)
        : input_(input), first_(first), started_(started) {
        subscribe<&Source::on_go>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_go(const Start&) {
        for (std::uint64_t value : input_) rt::send<Value>(first_, value);
    }

    const std::vector<std::uint64_t>& input_;
    rt::Agent& first_;
    StartLatch& started_;
};

Result run(const Params& params) {
    const Setup s = setup(params);
    const std::vector<std::uint64_t> input = inputs(s.values, s.max_value, s.seed);

    StartLatch started(s.bits + 2);  // the source, the stages, the validation agent
    MeasuredRun<SortedStream> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Source* source = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        rt::Agent* next = &coop.make_agent_with_binder<Validation>(dispatchers.binder(s.bits + 1), s.values,
                                                                   run.done(), started);
        // Built from the last stage back, as Savina's: bit bits-1 feeds the validation agent.
        for (unsigned bit = s.bits; bit-- > 0;)
            next = &coop.make_agent_with_binder<SortStage>(dispatchers.binder(1 + bit), s.values,
                                                           std::uint64_t{1} << bit, *next, started);
        source = &coop.make_agent_with_binder<Source>(dispatchers.binder(0), input, *next, started);
    });
    started.wait(env);
    Result result;

    // From the source's Start to the validation agent's last value.
    const SortedStream sorted = run.measure(result, [&] { rt::send<Start>(*source); });

    result.messages_processed = 1 + s.values * s.bits + sorted.count;
    result.answer = describe(sorted);
    result.expected = describe(savina::timed_sequential(result, [&] { return stream_of(radix_sort(input, s.bits)); }));
    return result;
}

void check(const Params& params) {
    const auto max_value = std::uint64_t(params.integer("max_value"));
    if (!std::has_single_bit(max_value))
        throw ParamError("savina_radixsort", "max_value",
                         "parameter 'max_value' must be a power of two, 2 to 2^62 (a sorting stage per bit); got " +
                             std::to_string(max_value));
    const Setup s = setup(params);
    check_thread_per_agent("savina_radixsort", params, std::uint64_t(s.bits) + 2,
                           "max_value=" + std::to_string(max_value));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(stream_of(radix_sort(inputs(s.values, s.max_value, s.seed), s.bits))), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("values", 100'000, {1, 10'000'000}, "values sorted (Savina's N)"),
        {.name = "max_value",
         .type = ParamType::integer,
         .default_value = std::int64_t{1} << 60,
         .help = "the values lie in [0, max_value), a power of two: one sorting stage per bit (Savina's M)",
         .minimum = 2,
         .maximum = double(std::int64_t{1} << 62)},
        savina_radixsort::seed_param(),
    };
}

const Registration registration(Kernel{
    .name = "savina_radixsort",
    .summary = "`values` values through a pipeline of one sorting agent per bit of `max_value`: a "
               "binary radix sort as a long pipeline of tiny stages",
    .description =
        "Savina's benchmark 16, Radix Sort (radixsort). A source agent sends `values` values, "
        "drawn below `max_value` = 2^b, one message each to a pipeline of b sorting agents, bit 0 "
        "first, whose last stage feeds a validation agent. A stage forwards each value whose bit "
        "is clear at once and holds the others; once it has seen every value it forwards the held "
        "ones in their order, so each stage is one stable partition and the validation agent "
        "receives the values sorted (a binary LSD radix sort). The phase runs from the source's "
        "Start message to the validation agent's last value; the agents are made and started "
        "before it, the values drawn before it. Messages: Start, then `values` into each of the b "
        "stages and into the validation agent (1 + values*(b+1); 6,100,001 at Savina's sizes). "
        "The sequential program (sequential_ns) is the same stable partition per bit in one "
        "loop. How it scales: a pipeline whose parallelism is the number of stages with values "
        "queued at once; each handler does a bit test and one send, so the runtime's cost per "
        "message, and for a pool the cost of handing values between threads, decides whether two "
        "threads beat one, and the sequential program, which moves no messages, beats every pool "
        "by far. Differences from Savina: Savina draws its values from its 16-bit PseudoRandom "
        "(abs(nextLong()) % M, so every value is below 65,536 and the stages above bit 15 hold "
        "nothing), ours from SplitMix64 below max_value, spread over every bit; ours are drawn "
        "before the phase, Savina's source draws them as it sends; max_value must be a power of "
        "two (Savina's stages test M/2, M/4, ... which are single bits only then); Savina's "
        "validation agent sums the values as doubles and prints the first out of place, ours "
        "counts them, sums them modulo 2^64 and hashes the multiset and the sequence; Savina's "
        "clock also covers making the actor system and its actors, ours not; its actors exit after "
        "their last value, ours stay until the environment stops after the phase.",
    .sources = {{"savina", "16. Radix Sort (radixsort)"}},
    .verifies = "the validation agent received every value, each at least the one before, with the "
                "inputs' sum and multiset hash and the sequence hash of the sequential program's "
                "stable radix sort",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_radixsort
