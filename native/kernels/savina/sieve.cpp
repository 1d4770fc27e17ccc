// savina_sieve: Savina's 18. Sieve of Eratosthenes (sieve). A producer sends the odd numbers
// below `limit` through a chain of filter agents, each holding up to `primes_per_filter` primes
// (the first holds 2): a filter drops a number one of its primes divides and passes the others
// on; the last filter keeps a number that reaches it as a new prime, or, when full, makes a new
// filter holding it. Measures a pipeline that grows as it runs, with heavy work per message.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_sieve {
namespace {

// The primes found, in the chain's order (ascending), and the chain's length.
struct Tally {
    std::uint64_t primes = 0;
    std::uint64_t largest = 0;
    std::uint64_t sum = 0;
    std::uint64_t hash = savina::kFnvBasis;  // FNV-1a over the primes in ascending order
    std::uint64_t filters = 0;
    std::uint64_t candidates = 0;  // Candidate messages the filters received (not in the answer)

    void add(std::uint64_t prime) noexcept {
        ++primes;
        largest = prime;
        sum += prime;
        hash = savina::fnv_fold(hash, prime);
    }
};

std::string describe(const Tally& t) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(t.hash));
    return "primes=" + std::to_string(t.primes) + " largest=" + std::to_string(t.largest) +
           " sum=" + std::to_string(t.sum) + " hash=" + hash + " filters=" + std::to_string(t.filters);
}

struct Setup {
    std::uint64_t limit;
    std::uint64_t per_filter;
};

Setup setup(const Params& params) {
    return {std::uint64_t(params.integer("limit")), std::uint64_t(params.integer("primes_per_filter"))};
}

// The sequential program: the chain's trial division in one loop. Each odd number from 3 below
// `limit` is divided by the primes found so far, in ascending order (the chain's order), up to
// the first that divides it, with no square-root bound (as the filters); one that none divides
// is a prime. With Count, also the Candidate messages the chain would deliver: a number reaches
// the filter holding its first divisor, or, a prime, every filter there is.
template <bool Count>
Tally trial_division(const Setup& s) {
    std::vector<std::uint64_t> primes{2};
    std::uint64_t candidates = 0;
    for (std::uint64_t n = 3; n < s.limit; n += 2) {
        bool prime = true;
        for (std::size_t i = 0; i < primes.size(); ++i) {
            if (n % primes[i] == 0) {
                prime = false;
                if constexpr (Count) candidates += i / s.per_filter + 1;
                break;
            }
        }
        if (!prime) continue;
        if constexpr (Count) candidates += (primes.size() + s.per_filter - 1) / s.per_filter;
        primes.push_back(n);
    }
    Tally t;
    for (std::uint64_t p : primes) t.add(p);
    t.filters = (t.primes + s.per_filter - 1) / s.per_filter;
    t.candidates = candidates;
    return t;
}

// Start, every Candidate, an Exit into each filter.
std::uint64_t messages(const Tally& t) { return 1 + t.candidates + t.filters; }

struct Start {};
struct Candidate {
    std::uint64_t value;
};
// Savina's "EXIT", down the chain; each filter adds its primes and its count of candidates.
struct Exit {
    Tally tally;
};

class Filter;

struct Chain {
    DispatcherChoice& dispatchers;
    std::uint64_t per_filter;
    rt::Completion<Tally>& done;
    StartLatch& started;
};

// Savina's PrimeFilterActor.
class Filter final : public rt::Agent {
public:
    Filter(const Chain& chain, std::uint32_t id, std::uint64_t first_prime) : chain_(chain), id_(id) {
        primes_.reserve(chain.per_filter);
        primes_.push_back(first_prime);
        subscribe<&Filter::on_candidate>();
        subscribe<&Filter::on_exit>();
    }

private:
    // The first filter is made before the phase; the others inside it, as Savina's.
    void on_start() override {
        if (id_ == 1) chain_.started.count_down();
    }

    void on_candidate(const Candidate& c) {
        ++received_;
        for (std::uint64_t prime : primes_)
            if (c.value % prime == 0) return;
        if (next_ != nullptr) rt::send<Candidate>(*next_, c.value);
        else if (primes_.size() < chain_.per_filter) primes_.push_back(c.value);
        else
            environment().introduce_coop(chain_.dispatchers.binder(id_ + 1), [&](rt::Coop& coop) {
                next_ = &coop.make_agent<Filter>(chain_, id_ + 1, c.value);
            });
    }

    void on_exit(const Exit& e) {
        Tally tally = e.tally;
        for (std::uint64_t prime : primes_) tally.add(prime);
        tally.candidates += received_;
        ++tally.filters;
        if (next_ != nullptr) rt::send<Exit>(*next_, tally);
        else chain_.done.set(tally);
    }

    const Chain& chain_;
    const std::uint32_t id_;
    std::vector<std::uint64_t> primes_;
    Filter* next_ = nullptr;
    std::uint64_t received_ = 0;
};

// Savina's NumberProducerActor: 3, 5, 7, ... below limit, then Exit.
class Producer final : public rt::Agent {
public:
    Producer(std::uint64_t limit, Filter& first, StartLatch& started)
        : limit_(limit), first_(first), started_(started) {
        subscribe<&Producer::on_go>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_go(const Start&) {
        for (std::uint64_t n = 3; n < limit_; n += 2) rt::send<Candidate>(first_, n);
        rt::send<Exit>(first_, Tally{});
    }

    const std::uint64_t limit_;
    Filter& first_;
    StartLatch& started_;
};

Result run(const Params& params) {
    const Setup s = setup(params);

    StartLatch started(2);  // the producer and the first filter
    MeasuredRun<Tally> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    const Chain chain{dispatchers, s.per_filter, run.done(), started};
    Producer* producer = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        Filter& first = coop.make_agent_with_binder<Filter>(dispatchers.binder(1), chain, 1, 2);
        producer = &coop.make_agent_with_binder<Producer>(dispatchers.binder(0), s.limit, first, started);
    });
    started.wait(env);
    Result result;

    // From the producer's Start to the last filter's having the Exit.
    const Tally found = run.measure(result, [&] { rt::send<Start>(*producer); });

    result.messages_processed = messages(found);
    result.answer = describe(found);
    result.expected = describe(savina::timed_sequential(result, [&] { return trial_division<false>(s); }));
    return result;
}

// The primes below `limit`, by a sieve of Eratosthenes: the chain's length, for the check.
std::uint64_t primes_below(std::uint64_t limit) {
    std::vector<bool> composite(limit, false);
    std::uint64_t count = 0;
    for (std::uint64_t n = 2; n < limit; ++n) {
        if (composite[n]) continue;
        ++count;
        for (std::uint64_t m = n * n; m < limit; m += n) composite[m] = true;
    }
    return count;
}

void check(const Params& params) {
    const Setup s = setup(params);
    if (params.text("dispatcher") != "active_obj") return;
    const std::uint64_t filters = (primes_below(s.limit) + s.per_filter - 1) / s.per_filter;
    check_thread_per_agent("savina_sieve", params, filters + 1,
                           "limit=" + std::to_string(s.limit) + " primes_per_filter=" + std::to_string(s.per_filter));
}

Expectation expect(const Params& params) {
    const Tally t = trial_division<true>(setup(params));
    return {describe(t), messages(t)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("limit", 100'000, {3, 10'000'000},
                      "the primes below limit are found: the odd numbers from 3 below it go down the chain (Savina's N)"),
        integer_param("primes_per_filter", 1'000, {1, 1'000'000},
                      "primes a filter holds before it makes the next filter (Savina's M)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_sieve",
    .summary = "the odd numbers below `limit` down a growing chain of filters holding "
               "`primes_per_filter` primes each: a pipeline with heavy work per message",
    .description =
        "Savina's benchmark 18, Sieve of Eratosthenes (sieve). A producer sends 3, 5, 7, ... "
        "below `limit`, one Candidate message each, then Exit, to the first filter, which holds "
        "the prime 2. A filter divides a candidate by its primes in order and drops it at the "
        "first that divides it; otherwise it passes it to the next filter, or, being the last, "
        "keeps it as a new prime, or, holding `primes_per_filter` already, makes a new filter (a "
        "coop of its own) holding it. Exit goes down the chain; the last filter's having it ends "
        "the run. The phase runs from the producer's Start to that; the producer and the first "
        "filter are made and started before it, the later filters inside it, as Savina's. "
        "Messages: Start, every Candidate each filter receives (a number reaches the filter "
        "holding its smallest prime factor, a prime every filter there is), and one Exit per "
        "filter (91,329 at Savina's sizes: 9,592 primes, 10 filters). The sequential program "
        "(sequential_ns) is the same trial division in one loop: each odd number divided by the "
        "primes found so far in ascending order (the chain's order) up to the first divisor, no "
        "square-root bound, the same divisions as the chain. How it scales: a pipeline of "
        "ceil(primes/primes_per_filter) filters whose messages each cost up to "
        "primes_per_filter divisions; every prime is divided by every prime before it, so at "
        "Savina's sizes the first filter does a fifth of the divisions, the second 18%, the "
        "third 15%, and a pool can keep two threads busy once the second filter exists (from "
        "the 1,001st prime, 7,927, on). "
        "Differences from Savina: Savina's last filter prints the count of primes, ours receives "
        "on the Exit message each filter's primes folded in (count, largest, sum modulo 2^64, a "
        "hash in order) and its count of candidates; Savina's clock also covers making the actor "
        "system, the producer and the first filter, ours not; its filters exit after Exit, ours "
        "stay until the environment stops after the phase.",
    .sources = {{"savina", "18. Sieve of Eratosthenes (sieve)"}},
    .verifies = "the primes the chain found (their count, largest, sum and a hash in order) and "
                "the chain's length, as the sequential program's trial division finds them",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_sieve
