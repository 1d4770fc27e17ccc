// savina_filterbank: Savina's 17. Filter Bank (filterbank). A producer and a source feed a stream
// of values to `channels` banks, each a pipeline delay -> FIR filter -> down-sampler -> delay ->
// FIR filter -> tagger; an integrator gathers the banks' outputs, a combiner adds them, a sink
// takes the sums. A StreamIt pipeline with `channels` parallel branches, each FIR filter's work
// `columns` multiply-adds per value.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_filterbank {
namespace {

// The source's values cycle through 0..999, as Savina's SourceActor.
constexpr std::uint32_t kMaxValue = 1000;

struct Setup {
    std::uint64_t simulations;
    std::uint32_t columns;
    std::uint32_t channels;
    // Savina's coefficient matrices (FilterBankConfig): channel j's H and F rows.
    std::vector<std::vector<double>> h;
    std::vector<std::vector<double>> f;
};

Setup setup(const Params& params) {
    Setup s{std::uint64_t(params.integer("simulations")), std::uint32_t(params.integer("columns")),
            std::uint32_t(params.integer("channels")), {}, {}};
    const double columns = s.columns, channels = s.channels;
    s.h.assign(s.channels, std::vector<double>(s.columns));
    s.f.assign(s.channels, std::vector<double>(s.columns));
    for (std::uint32_t j = 0; j < s.channels; ++j) {
        const double dj = j;
        for (std::uint32_t i = 0; i < s.columns; ++i) {
            const double di = i;
            s.h[j][i] = (1.0 * di * columns) + (1.0 * dj * channels) + dj + di + dj + 1;
            s.f[j][i] = (1.0 * di * dj) + (1.0 * dj * dj) + dj + di;
        }
    }
    return s;
}

// The filters, as Savina's actors compute them; the agents and the sequential program share them.
// A delay line of `length` values: puts out the value it took `length` values ago (0 at first).
class Delay {
public:
    explicit Delay(std::uint32_t length) : state_(length, 0.0) {}
    double step(double value) noexcept {
        const double out = state_[at_];
        state_[at_] = value;
        at_ = (at_ + 1) % state_.size();
        return out;
    }

private:
    std::vector<double> state_;
    std::size_t at_ = 0;
};

// Savina's FirFilterActor: a window of the last `coefficients.size()` values (a ring); once it is
// full, each value puts out the sum over the ring's slots i of slot i times coefficient
// (size - 1 - i), slots in index order, the ring's rotation as it is (Savina's, reproduced).
class Fir {
public:
    explicit Fir(const std::vector<double>& coefficients)
        : coefficients_(coefficients), data_(coefficients.size(), 0.0) {}
    bool step(double value, double& out) noexcept {
        data_[at_] = value;
        if (++at_ == data_.size()) {
            full_ = true;
            at_ = 0;
        }
        if (!full_) return false;
        const std::size_t n = data_.size();
        double sum = 0.0;
        for (std::size_t i = 0; i < n; ++i) sum += data_[i] * coefficients_[n - i - 1];
        out = sum;
        ++outputs_;
        hash_ = savina::fnv_fold(hash_, std::bit_cast<std::uint64_t>(sum));
        return true;
    }
    // Its outputs so far: how many, and a hash of their bits in order.
    std::uint64_t outputs() const noexcept { return outputs_; }
    std::uint64_t hash() const noexcept { return hash_; }

private:
    const std::vector<double>& coefficients_;
    std::vector<double> data_;
    std::size_t at_ = 0;
    bool full_ = false;
    std::uint64_t outputs_ = 0;
    std::uint64_t hash_ = savina::kFnvBasis;
};

// Savina's SampleFilterActor: the first of every `rate` values passes, the others become 0.
class Sample {
public:
    explicit Sample(std::uint32_t rate) : rate_(rate) {}
    double step(double value) noexcept {
        const double out = received_ == 0 ? value : 0.0;
        received_ = (received_ + 1) % rate_;
        return out;
    }

private:
    const std::uint32_t rate_;
    std::uint32_t received_ = 0;
};

// One bank's filters in order.
struct Bank {
    Bank(const Setup& s, std::uint32_t j)
        : delay1(s.columns - 1), fir1(s.h[j]), sample(s.columns), delay2(s.columns - 1), fir2(s.f[j]) {}
    Delay delay1;
    Fir fir1;
    Sample sample;
    Delay delay2;
    Fir fir2;
};

// The sink's values: how many, a hash of their bits and their sum, both in order; and every FIR
// filter's outputs: how many in all, and their hashes folded, channel by channel, the first
// filter's then the second's. (At Savina's sizes the sink's values are all 0: the filters' are
// what pins the work.)
struct Answer {
    std::uint64_t outputs = 0;
    std::uint64_t hash = savina::kFnvBasis;
    double sum = 0;
    std::uint64_t filter_outputs = 0;
    std::uint64_t filters_hash = savina::kFnvBasis;
    void take(double value) noexcept {
        ++outputs;
        hash = savina::fnv_fold(hash, std::bit_cast<std::uint64_t>(value));
        sum += value;
    }
    void take_filters(const Fir& first, const Fir& second) noexcept {
        filter_outputs += first.outputs() + second.outputs();
        filters_hash = savina::fnv_fold(savina::fnv_fold(filters_hash, first.hash()), second.hash());
    }
};

std::string describe(const Answer& a) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "outputs=%llu outputs_hash=%016llx outputs_sum=%.17g filter_outputs=%llu filters_hash=%016llx",
                  static_cast<unsigned long long>(a.outputs), static_cast<unsigned long long>(a.hash), a.sum,
                  static_cast<unsigned long long>(a.filter_outputs),
                  static_cast<unsigned long long>(a.filters_hash));
    return text;
}

// The sequential program: each value through every bank's filters in turn, the banks' outputs
// added in channel order (from 0.0, as Savina's combiner) and taken by the sink, in one loop.
Answer sequential(const Setup& s) {
    std::vector<Bank> banks;
    banks.reserve(s.channels);
    for (std::uint32_t j = 0; j < s.channels; ++j) banks.emplace_back(s, j);
    std::vector<double> outs(s.channels);
    Answer a;
    std::uint32_t current = 0;
    for (std::uint64_t t = 0; t < s.simulations; ++t) {
        const double value = current;
        current = (current + 1) % kMaxValue;
        std::uint32_t produced = 0;
        for (std::uint32_t j = 0; j < s.channels; ++j) {
            Bank& b = banks[j];
            double y = 0;
            if (!b.fir1.step(b.delay1.step(value), y)) continue;
            double u = 0;
            if (!b.fir2.step(b.delay2.step(b.sample.step(y)), u)) continue;
            outs[j] = u;
            ++produced;
        }
        // Every bank has the same delays and windows: all put out a value at the same steps.
        if (produced == 0) continue;
        double sum = 0;
        for (double v : outs) sum += v;
        a.take(sum);
    }
    for (const Bank& b : banks) a.take_filters(b.fir1, b.fir2);
    return a;
}

// The values each stage passes on, with the counts the parameters fix.
struct Counts {
    std::uint64_t fir1_out;  // per channel
    std::uint64_t fir2_out;  // per channel; also the sink's values
};

Counts counts(const Setup& s) {
    const std::uint64_t c = s.columns;
    const std::uint64_t a = s.simulations >= c ? s.simulations - c + 1 : 0;
    const std::uint64_t b = a >= c ? a - c + 1 : 0;
    return {a, b};
}

// Next (kernel -> producer, source -> producer), Boot (producer -> source), Value (down the
// pipelines and to the sink), Tagged (tagger -> integrator), Collection (integrator -> combiner),
// Exit (down the pipelines, from the producer to the sink).
std::uint64_t messages(const Setup& s) {
    const Counts k = counts(s);
    const std::uint64_t n = s.channels, S = s.simulations;
    const std::uint64_t next = 1 + S, boot = S, source_values = S;
    const std::uint64_t into_fir1 = 3 * n * S;            // branches -> bank -> delay -> FIR
    const std::uint64_t after_fir1 = 3 * n * k.fir1_out;  // FIR -> sample -> delay -> FIR
    const std::uint64_t after_fir2 = 2 * n * k.fir2_out;  // FIR -> tagger -> integrator
    const std::uint64_t combined = 2 * k.fir2_out;        // integrator -> combiner -> sink
    const std::uint64_t exits = 4 + 8 * n;
    return next + boot + source_values + into_fir1 + after_fir1 + after_fir2 + combined + exits;
}

struct Next {};
struct Boot {};
struct Exit {};
struct Value {
    double value;
};
struct Tagged {
    std::uint32_t channel;
    double value;
};
struct Collection {
    std::vector<double> values;
};

// Every agent counts its start down and its messages up.
class Node : public rt::Agent {
public:
    explicit Node(StartLatch& started) : started_(started) {}
    std::uint64_t handled() const noexcept { return handled_; }

protected:
    std::uint64_t handled_ = 0;

private:
    void on_start() override { started_.count_down(); }
    StartLatch& started_;
};

// A pipeline stage: a Value in, maybe a Value on to `next`; Exit passed on.
template <class Filter>
class Stage final : public Node {
public:
    template <class... Args>
    Stage(StartLatch& started, rt::Agent& next, Args&&... args)
        : Node(started), next_(next), filter_(std::forward<Args>(args)...) {
        subscribe<&Stage::on_value>();
        subscribe<&Stage::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        if constexpr (std::is_same_v<Filter, Fir>) {
            double out = 0;
            if (filter_.step(v.value, out)) rt::send<Value>(next_, out);
        } else {
            rt::send<Value>(next_, filter_.step(v.value));
        }
    }
    void on_exit(const Exit&) {
        ++handled_;
        rt::send<Exit>(next_);
    }

public:
    const Filter& filter() const noexcept { return filter_; }

private:
    rt::Agent& next_;
    Filter filter_;
};

// Savina's BankActor (its value on to the first delay) and TaggedForwardActor.
struct Forward {
    double step(double value) const noexcept { return value; }
};

class Tagger final : public Node {
public:
    Tagger(StartLatch& started, rt::Agent& integrator, std::uint32_t channel)
        : Node(started), integrator_(integrator), channel_(channel) {
        subscribe<&Tagger::on_value>();
        subscribe<&Tagger::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        rt::send<Tagged>(integrator_, channel_, v.value);
    }
    void on_exit(const Exit&) {
        ++handled_;
        rt::send<Exit>(integrator_);
    }

    rt::Agent& integrator_;
    const std::uint32_t channel_;
};

class Sink final : public Node {
public:
    Sink(StartLatch& started, rt::Completion<Answer>& done) : Node(started), done_(done) {
        subscribe<&Sink::on_value>();
        subscribe<&Sink::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        answer_.take(v.value);
    }
    void on_exit(const Exit&) {
        ++handled_;
        done_.set(answer_);
    }

    rt::Completion<Answer>& done_;
    Answer answer_;
};

// Savina's CombineActor: the channels' values added in channel order, from 0.0.
class Combiner final : public Node {
public:
    Combiner(StartLatch& started, Sink& sink) : Node(started), sink_(sink) {
        subscribe<&Combiner::on_collection>();
        subscribe<&Combiner::on_exit>();
    }

private:
    void on_collection(const Collection& c) {
        ++handled_;
        double sum = 0;
        for (double v : c.values) sum += v;
        rt::send<Value>(sink_, sum);
    }
    void on_exit(const Exit&) {
        ++handled_;
        rt::send<Exit>(sink_);
    }

    Sink& sink_;
};

// Savina's IntegratorActor: the k-th value of every channel make the k-th collection, sent once
// all channels' are in (each channel's values arrive in order); Exit on once every channel's has.
class Integrator final : public Node {
public:
    Integrator(StartLatch& started, Combiner& combiner, std::uint32_t channels)
        : Node(started), combiner_(combiner), waiting_(channels) {
        subscribe<&Integrator::on_tagged>();
        subscribe<&Integrator::on_exit>();
    }

private:
    void on_tagged(const Tagged& t) {
        ++handled_;
        std::deque<double>& queue = waiting_[t.channel];
        if (queue.empty()) ++ready_;
        queue.push_back(t.value);
        if (ready_ != waiting_.size()) return;
        std::vector<double> values;
        values.reserve(waiting_.size());
        ready_ = 0;
        for (std::deque<double>& q : waiting_) {
            values.push_back(q.front());
            q.pop_front();
            if (!q.empty()) ++ready_;
        }
        rt::send<Collection>(combiner_, std::move(values));
    }
    void on_exit(const Exit&) {
        ++handled_;
        if (++exits_ == waiting_.size()) rt::send<Exit>(combiner_);
    }

    Combiner& combiner_;
    std::vector<std::deque<double>> waiting_;  // per channel, the values not yet collected
    std::size_t ready_ = 0;                    // channels with a value waiting
    std::size_t exits_ = 0;
};

// Savina's BranchesActor: each value and the Exit to every bank.
class Branches final : public Node {
public:
    Branches(StartLatch& started, std::vector<rt::Agent*> banks) : Node(started), banks_(std::move(banks)) {
        subscribe<&Branches::on_value>();
        subscribe<&Branches::on_exit>();
    }

private:
    void on_value(const Value& v) {
        ++handled_;
        for (rt::Agent* bank : banks_) rt::send<Value>(*bank, v.value);
    }
    void on_exit(const Exit&) {
        ++handled_;
        for (rt::Agent* bank : banks_) rt::send<Exit>(*bank);
    }

    std::vector<rt::Agent*> banks_;
};

class Source;

// Savina's ProducerActor: a Boot to the source per Next, `simulations` times, then Exit.
class Producer final : public Node {
public:
    Producer(StartLatch& started, std::uint64_t simulations) : Node(started), simulations_(simulations) {
        subscribe<&Producer::on_next>();
    }
    void link(Source& source) { source_ = &source; }

private:
    void on_next(const Next&);

    const std::uint64_t simulations_;
    std::uint64_t sent_ = 0;
    Source* source_ = nullptr;
};

// Savina's SourceActor: per Boot, the next value (0..999 in turn) to the branches and a Next to
// the producer.
class Source final : public Node {
public:
    Source(StartLatch& started, Producer& producer, Branches& branches)
        : Node(started), producer_(producer), branches_(branches) {
        subscribe<&Source::on_boot>();
        subscribe<&Source::on_exit>();
    }

private:
    void on_boot(const Boot&) {
        ++handled_;
        rt::send<Value>(branches_, double(current_));
        current_ = (current_ + 1) % kMaxValue;
        rt::send<Next>(producer_);
    }
    void on_exit(const Exit&) {
        ++handled_;
        rt::send<Exit>(branches_);
    }

    Producer& producer_;
    Branches& branches_;
    std::uint32_t current_ = 0;
};

void Producer::on_next(const Next&) {
    ++handled_;
    if (sent_ == simulations_) {
        rt::send<Exit>(*source_);
        return;
    }
    rt::send<Boot>(*source_);
    ++sent_;
}

// Producer, source, branches, integrator, combiner, sink and 7 per channel.
std::uint64_t agents(const Setup& s) { return 6 + 7 * std::uint64_t(s.channels); }

Result run(const Params& params) {
    const Setup s = setup(params);

    StartLatch started(std::uint32_t(agents(s)));
    MeasuredRun<Answer> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Producer* producer = nullptr;
    std::vector<Node*> all;
    std::vector<const Stage<Fir>*> firs;  // per channel, the first filter and the second
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        unsigned index = 0;
        auto make = [&]<class A, class... Args>(std::type_identity<A>, Args&&... args) -> A& {
            A& agent = coop.make_agent_with_binder<A>(dispatchers.binder(index++), started,
                                                      std::forward<Args>(args)...);
            all.push_back(&agent);
            return agent;
        };
        Sink& sink = make(std::type_identity<Sink>{}, run.done());
        Combiner& combiner = make(std::type_identity<Combiner>{}, sink);
        Integrator& integrator = make(std::type_identity<Integrator>{}, combiner, s.channels);
        std::vector<rt::Agent*> banks;
        for (std::uint32_t j = 0; j < s.channels; ++j) {
            rt::Agent& tagger = make(std::type_identity<Tagger>{}, integrator, j);
            Stage<Fir>& fir2 = make(std::type_identity<Stage<Fir>>{}, tagger, s.f[j]);
            rt::Agent& delay2 = make(std::type_identity<Stage<Delay>>{}, fir2, s.columns - 1);
            rt::Agent& sample = make(std::type_identity<Stage<Sample>>{}, delay2, s.columns);
            Stage<Fir>& fir1 = make(std::type_identity<Stage<Fir>>{}, sample, s.h[j]);
            firs.push_back(&fir1);
            firs.push_back(&fir2);
            rt::Agent& delay1 = make(std::type_identity<Stage<Delay>>{}, fir1, s.columns - 1);
            banks.push_back(&make(std::type_identity<Stage<Forward>>{}, delay1));
        }
        Branches& branches = make(std::type_identity<Branches>{}, std::move(banks));
        producer = &make(std::type_identity<Producer>{}, s.simulations);
        producer->link(make(std::type_identity<Source>{}, *producer, branches));
    });
    started.wait(env);
    Result result;

    // From the producer's first Next to the sink's Exit, the last message.
    Answer answer = run.measure(result, [&] { rt::send<Next>(*producer); });

    // Every filter has handled its last value (the Exit behind it reached the sink).
    for (std::size_t j = 0; j < firs.size(); j += 2) answer.take_filters(firs[j]->filter(), firs[j + 1]->filter());
    for (const Node* node : all) result.messages_processed += node->handled();
    result.answer = describe(answer);
    result.expected = describe(savina::timed_sequential(result, [&] { return sequential(s); }));
    return result;
}

void check(const Params& params) {
    const auto channels = params.integer("channels");
    check_thread_per_agent("savina_filterbank", params, 6 + 7 * std::uint64_t(channels),
                           "channels=" + std::to_string(channels));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(sequential(s)), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("simulations", 34'816, {1, 100'000'000},
                      "values the source sends down the banks (Savina's NUM_SIMULATIONS, 2048 + 2*16384)"),
        integer_param("columns", 16'384, {2, 1'048'576},
                      "taps of each FIR filter, the down-sampling rate, and one more than each delay "
                      "line's length (Savina's NUM_COLUMNS)"),
        integer_param("channels", 8, {2, 34},
                      "banks, each a pipeline of filters (Savina's NUM_CHANNELS, which it holds to 2..34)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_filterbank",
    .summary = "a stream of values through `channels` parallel pipelines of delays, FIR filters "
               "and down-samplers, gathered and added: a pipeline with parallel branches",
    .description =
        "Savina's benchmark 17, Filter Bank (filterbank), after StreamIt's. A producer sends the "
        "source a Boot per value, `simulations` times (the source answers each with a Next); "
        "the source sends each value (0, 1, ..., 999, 0, ...) to a branches agent, which sends "
        "it to each of `channels` banks. Bank j is a pipeline of agents: a forwarder, a delay "
        "line of columns - 1 values, a FIR filter with `columns` taps (Savina's H row j), a "
        "down-sampler keeping the first of every `columns` values (the others become 0), a "
        "second delay, a second FIR filter (Savina's F row j) and a tagger, which sends each "
        "value with its channel to an integrator. A FIR filter puts out nothing until its "
        "window of `columns` values is full, then one value per value: `columns` multiply-adds "
        "over its ring of values in slot order, as Savina's. The integrator sends the k-th "
        "value of every channel as one collection to a combiner, which adds them in channel "
        "order and sends the sum to the sink. After the last value an Exit follows the same "
        "path; the sink's Exit ends the phase, which starts with the producer's first Next (all "
        "6 + 7*channels agents made and started before it). Each bank's first FIR filter does "
        "the work (simulations - columns + 1 windows of `columns` multiply-adds, the second "
        "filter as many fewer again), so the `channels` branches run in parallel: it scales "
        "up to `channels` threads, less the producer and source's ping-pong and the forwarding "
        "(a message per value per stage). The answer holds the sink's values (their count, a "
        "hash of their bits and their sum, in order) and every FIR filter's outputs (their count "
        "and a hash of each filter's, read from the filters after the phase): with fewer than "
        "3*columns - 1 simulations, as at Savina's sizes, the sink's values are all 0, since the "
        "only sampled value that reaches the second filters is the first filters' first output, "
        "over a window holding nothing but the value 0. Both are checked bit for bit against "
        "the sequential program, each value through every bank's filters in turn in one loop "
        "(its time is the metric sequential_ns). Differences from Savina: its Akka version deadlocks by its own "
        "warning, ours does not; the integrator queues each channel's values where Savina's "
        "keeps a list of maps (the same collections); the sink hashes and adds its values where "
        "Savina's counts them to print one in 100; its clock also covers making the actor "
        "system and the actors, ours neither.",
    .sources = {{"savina", "17. Filter Bank (filterbank)"}},
    .verifies = "the sink's values (count, a hash of their bits and their sum in order) and every FIR "
                "filter's outputs (count, a hash per filter) equal the sequential program's bit for bit",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_filterbank
