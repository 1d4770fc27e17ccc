// The benchmark kernel interface: a name, a parameter schema declared here once (Python reads it
// through the binding), and run(params) -> Result with a verified answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace labctl::kernels {

using Value = std::variant<std::int64_t, double, bool, std::string>;

// Which parameters a resolution keeps: those that apply to the chosen dispatcher, or all. With
// `dispatcher` a given parameter that does not apply is refused (a command line names it on
// purpose); with `drop` it is left out and the reason recorded (a grid crosses it with
// dispatchers it does not fit: the experiment says what was left out, and why).
enum class Scope { dispatcher, drop, none };

enum class ParamType { integer, real, boolean, choice, text };
std::string_view type_name(ParamType type) noexcept;

struct ParamSpec {
    std::string name;
    ParamType type;
    Value default_value;
    std::string help;
    std::optional<double> minimum = {};   // integer and real
    std::optional<double> maximum = {};
    std::vector<Value> choices = {};      // choice (strings), or allowed integers
    std::vector<std::string> applies_to = {};  // dispatchers it applies to; empty: all
    // Defaults of a dispatcher's own, in place of default_value where `dispatcher` is that one.
    std::vector<std::pair<std::string, Value>> default_for = {};
    // Checks beyond type and range; throws std::invalid_argument saying what is wrong.
    std::function<void(const Value&)> validate = {};
    // It says how the kernel runs (a dispatcher's or a scheduler's setting), not what it does
    // (its size, its kind of work): reports compare configurations doing the same work.
    bool configuration = false;
};

// The inclusive range of a number parameter.
struct Bounds {
    double minimum;
    double maximum;
};

// The parameter most kernels declare: an integer in `bounds`, what the work is made of (the
// kernel's sizes and counts). Anything more (choices, a validator, dispatchers it applies to):
// write the ParamSpec out.
inline ParamSpec integer_param(std::string name, std::int64_t default_value, Bounds bounds, std::string help) {
    return {.name = std::move(name),
            .type = ParamType::integer,
            .default_value = default_value,
            .help = std::move(help),
            .minimum = bounds.minimum,
            .maximum = bounds.maximum};
}

// The same for a real number.
inline ParamSpec real_param(std::string name, double default_value, Bounds bounds, std::string help) {
    return {.name = std::move(name),
            .type = ParamType::real,
            .default_value = default_value,
            .help = std::move(help),
            .minimum = bounds.minimum,
            .maximum = bounds.maximum};
}

// A bad parameter: the message names the kernel, the parameter and what is allowed.
class ParamError : public std::invalid_argument {
public:
    ParamError(std::string kernel, std::string param, const std::string& message)
        : std::invalid_argument(kernel + ": " + message), kernel_(std::move(kernel)),
          param_(std::move(param)) {}
    const std::string& kernel() const noexcept { return kernel_; }
    const std::string& param() const noexcept { return param_; }

private:
    std::string kernel_;
    std::string param_;
};

// A kernel computed a wrong answer: it never returns a timing.
class VerificationError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Resolved parameters: every parameter that applies, typed, defaults filled in.
class Params {
public:
    std::int64_t integer(std::string_view name) const;
    double real(std::string_view name) const;
    bool boolean(std::string_view name) const;
    const std::string& text(std::string_view name) const;  // text and choice
    bool has(std::string_view name) const;
    const std::map<std::string, Value, std::less<>>& values() const noexcept { return values_; }

private:
    friend Params resolve(const struct Kernel&, const std::map<std::string, Value>&, Scope,
                          std::map<std::string, std::string>*);
    const Value& at(std::string_view name) const;
    std::map<std::string, Value, std::less<>> values_;
};

struct Metric {
    std::string name;
    double value;
};

// A figure a kernel may record in Result::metrics, declared with the kernel: the catalogue says
// what its runs can hold (so an experiment can refuse a reference to a figure no run records),
// and run() refuses a figure the kernel did not declare.
struct MetricSpec {
    std::string name;
    std::string absent_when = {};  // when a run leaves it out, in words; empty: every run records it
};

// What the runtime counted of the phase, for its fingerprint (runtime/stats.hpp): set by
// MeasuredPhase on our runtime; a peer's kernels (CAF) have none. Each is named as the sample's
// count it becomes (labctl/vocabulary/metrics.py RUNTIME_COUNTS), from here to the DataFrame.
struct RuntimeCounts {
    std::uint64_t agents_created = 0;  // agents registered
    std::uint64_t inbox_messages = 0;  // messages the runtime's threads took from inboxes
    std::uint64_t inbox_takes = 0;     // takes that found at least one
    std::uint64_t inbox_largest = 0;   // the most one take found
    std::int64_t idle_ns = 0;          // time the runtime's threads spent waiting for work
    std::int64_t thread_ns = 0;        // time the runtime's threads existed in the span
    std::int64_t span_ns = 0;          // what these cover: the phase, to the reading after its end
};

struct Result {
    std::int64_t elapsed_ns = 0;      // the measured phase (or, with clock=lifetime, the
                                      // environment's life around it), steady clock, inside the kernel
    std::uint64_t messages_processed = 0;  // in the measured phase
    std::string answer;               // what the kernel computed
    std::string expected;             // what it must be
    std::vector<Metric> metrics;      // kernel-specific figures (agents, latency percentiles...)
    std::vector<std::int64_t> thread_cpu_ns;  // per runtime thread, over the measured phase
    // Every thread of the process over the phase: beside the runtime's, the kernel's own (which
    // sends in counting_actor) and any other that takes part.
    std::int64_t process_cpu_ns = 0;
    std::optional<RuntimeCounts> runtime_counts;
    // A latency kernel's histogram (the service's): each bucket that counted a value, its lowest
    // equivalent value (ns) and its count, lowest first; empty for the other kernels.
    std::vector<std::pair<std::int64_t, std::uint64_t>> histogram;
};

// What a correct run must report, known from the parameters alone: how external programs
// (runtime = a peer such as go) are verified, as our kernels verify themselves.
struct Expectation {
    std::string answer;
    std::uint64_t messages = 0;
    // Where the schedule decides part of the count (chat: a post reaches a member who leaves the
    // chat in the same turn or not), the most a correct run handles, `messages` the fewest; 0
    // where the count is exact; std::nullopt where no number bounds it (a request the schedule
    // may refuse again and again: savina_philosopher's denials, savina_barber's turned-away
    // customers), `messages` then the fewest and no most.
    std::optional<std::uint64_t> messages_most = 0;
};

// The messages `expectation` allows, in words: "12", "12 to 20" or "at least 12".
std::string describe_messages(const Expectation& expectation);

// Whether a run that handled `messages` messages handled as many as `expectation` allows.
bool allows_messages(const Expectation& expectation, std::uint64_t messages) noexcept;

// Faults a test can ask a run to commit, to prove the layers above handle them; outside_work
// adds costly work before and after the kernel, outside its phase, which no measure may count;
// undeclared_metric records a figure the kernel does not declare, which run() must refuse.
enum class Fault { none, wrong_answer, crash, hang, outside_work, undeclared_metric };

// Where a kernel comes from: a study of studies.hpp (its key) and the part of it the kernel
// follows ("ThreadRing", "the skynet table").
struct Citation {
    std::string study;
    std::string part;
};

// A figure of another kernel that a floor kernel bounds: on the same machine it cannot be better
// than the floor's (a round trip between threads is at least a cache line's), so a report states it
// as a multiple of the floor ("1.4x the cache line here"). Declared by the floor kernel, stored
// with a run's catalogue, so a report that reads only the store knows it.
struct FloorOf {
    std::string kernel;        // the kernel whose figure it bounds
    std::string metric;        // that figure: elapsed_ns, msgs_per_s or one of the kernel's metrics
    std::string floor_metric;  // the floor kernel's metric it is compared with, in the same unit
    std::string name;          // the floor in words: "the cache line", "a futex wake-up"
    // Only the bounded kernel's points with these parameter values (dispatcher=active_obj): the
    // floor of a wake-up bounds a hop only where every hop wakes a thread.
    std::map<std::string, Value, std::less<>> where = {};
};

struct Kernel {
    std::string name;
    std::string summary;      // one line
    std::string description;  // what it measures and how
    std::vector<Citation> sources;  // the studies it reproduces (studies.hpp), and where in each
    std::string verifies;     // what its answer is checked against
    std::vector<ParamSpec> params;  // its own and the dispatcher parameters it accepts
    // Every figure it may record in Result::metrics (a sample's own, elapsed_ns and the rest, are
    // no kernel's): recording another is a programming error, which run() throws.
    std::vector<MetricSpec> metrics = {};
    // Cross-parameter checks beyond the schema; throws ParamError.
    std::function<void(const Params&)> check;
    Result (*run)(const Params&);
    // The runtime it is written on: "labctl" (ours), or a peer built in, such as "caf", whose
    // kernels are named "<runtime>_<kernel>" after the kernel of ours they implement.
    std::string runtime = "labctl";
    // The answer and message count of a correct run, where a kernel can state them without
    // running: external programs implementing it are verified against this.
    Expectation (*expect)(const Params&) = nullptr;
    // About how many messages a run processes, from the parameters alone: what `labctl plan`
    // estimates a never-run point's time from. Kernels with `expect` need none (its count, the
    // fewest where the schedule decides part of it); a kernel timed by duration_s reports 0 when
    // that setting governs the run.
    double (*work)(const Params&) = nullptr;
    // The bytes a run must hold at least, from the parameters alone, for a kernel whose memory
    // grows with them past what a machine has (apsp's blocks, quicksort's values): a lower
    // bound, counting only what it cannot do without, so that the runner refuses a point before
    // it runs only where it cannot fit under its memory limit, never one that would.
    double (*memory)(const Params&) = nullptr;
    // A floor kernel measures a limit of the machine rather than of the runtime (floors/floors.hpp): the
    // figures of other kernels it bounds. Empty for every other kernel.
    std::vector<FloorOf> floor_of = {};
};

// The messages a run of `kernel` with `params` processes, about (see Kernel::work); 0 if unknown.
double work(const Kernel& kernel, const Params& params);

// The bytes a run of `kernel` with `params` holds at least (see Kernel::memory); 0 if unknown.
double memory(const Kernel& kernel, const Params& params);

// Kernels register themselves from their own file with a static Registration. Each file keeps
// its code in `namespace labctl::kernels::<kernel> { namespace { ... } }`, named as the kernel it
// registers (savina_apsp for savina/apsp.cpp, caf_skynet for caf/classic/skynet.cpp; thread_ring
// for the file of both rings), so that no two files share one: an anonymous namespace alone is
// not enough, because GCC gives a handler's instantiation (rt::detail::invoke<&C::m>)
// weak external linkage with the same name in every file, and two files' `Member::on_token`
// would be merged into one (a ring's tokens went to another kernel's handler and were dropped).
struct Registration {
    explicit Registration(Kernel kernel);
};

const std::vector<Kernel>& registry();
const Kernel& find_kernel(std::string_view name);  // throws ParamError naming the kernels

// Validates and types `given` (strings from a command line are parsed) against the kernel's
// schema, fills in defaults, and drops the parameters that do not apply to the chosen
// dispatcher; with Scope::none every parameter is kept whatever the dispatcher (for a program
// that has no dispatchers, such as an external peer). Under Scope::drop, `dropped` (if given)
// receives each given parameter left out, with why. Throws ParamError.
Params resolve(const Kernel& kernel, const std::map<std::string, Value>& given,
               Scope scope = Scope::dispatcher, std::map<std::string, std::string>* dropped = nullptr);

// Runs the kernel and checks its answer: throws VerificationError if it is wrong, and
// std::logic_error if it recorded a metric it does not declare (Kernel::metrics), or one twice.
Result run(const Kernel& kernel, const Params& params, Fault fault = Fault::none);

std::string to_string(const Value& value);

}  // namespace labctl::kernels
