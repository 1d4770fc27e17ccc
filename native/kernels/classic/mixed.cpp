// mixed: rings of agents passing a token, each ring rebuilt `repetitions` times, while a worker
// per ring factorizes a large number once per rebuild. Measures message passing, agent creation
// and teardown, and CPU-bound handlers competing for the same threads.
#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"

namespace labctl::kernels::mixed {
namespace {

using Clock = std::chrono::steady_clock;

// 86028157 x 329545133, the study's task.
constexpr std::uint64_t kStudyNumber = 28'350'160'440'309'881;
constexpr std::int64_t kMaxNumber = std::int64_t{1} << 62;
// A number up to 2^62 has at most 62 prime factors.
constexpr std::size_t kMaxFactors = 62;

struct Token {
    std::uint64_t value;
    std::uint64_t hops;  // handlings of the token in this ring so far, counted by each agent
};

struct Calc {
    std::uint64_t number;
};

struct Factors {
    std::uint32_t count = 0;
    std::array<std::uint64_t, kMaxFactors> factor{};
};

struct MasterDone {
    std::uint64_t rounds;  // rings completed, one per repetition
    std::uint64_t hops;    // token handlings over every ring
};

// Trial division, as the study does it (libcppa's factorize: d = 2, then odd d, while d < n,
// dividing n by each factor found; what is left, d == n, is the last factor). For p*q with primes
// p < q, d runs up to q: about q/2 divisions, 165M for the study's number. The work is real and
// redone for every Calc, nothing is cached.
Factors factorize_to_n(std::uint64_t n) {
    Factors factors;
    if (n <= 3) {
        factors.factor[factors.count++] = n;
        return factors;
    }
    std::uint64_t d = 2;
    while (d < n) {
        if (n % d == 0) {
            factors.factor[factors.count++] = d;
            n /= d;
        } else {
            d = d == 2 ? 3 : d + 2;
        }
    }
    factors.factor[factors.count++] = d;
    return factors;
}

// The same division, stopping at the square root of what is left: about max(p, sqrt(q))/2
// divisions, 43M for the study's number (a quarter of the study's work).
Factors factorize_to_sqrt(std::uint64_t n) {
    Factors factors;
    while (n % 2 == 0) {
        factors.factor[factors.count++] = 2;
        n /= 2;
    }
    for (std::uint64_t d = 3; d * d <= n; d += 2) {
        while (n % d == 0) {
            factors.factor[factors.count++] = d;
            n /= d;
        }
    }
    if (n > 1) factors.factor[factors.count++] = n;
    return factors;
}

std::uint64_t multiply_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
    return std::uint64_t(static_cast<unsigned __int128>(a) * b % m);
}

std::uint64_t power_mod(std::uint64_t base, std::uint64_t exponent, std::uint64_t m) {
    std::uint64_t result = 1;
    base %= m;
    for (; exponent != 0; exponent >>= 1) {
        if (exponent & 1) result = multiply_mod(result, base, m);
        base = multiply_mod(base, base, m);
    }
    return result;
}

// Miller-Rabin with the first twelve primes as bases: exact for every 64-bit n, and independent
// of the trial division it checks.
bool is_prime(std::uint64_t n) {
    constexpr std::array<std::uint64_t, 12> bases{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    if (n < 2) return false;
    for (std::uint64_t p : bases) {
        if (n % p == 0) return n == p;
    }
    std::uint64_t d = n - 1;
    unsigned shifts = 0;
    for (; d % 2 == 0; d /= 2) ++shifts;
    for (std::uint64_t a : bases) {
        std::uint64_t x = power_mod(a, d, n);
        if (x == 1 || x == n - 1) continue;
        bool composite = true;
        for (unsigned i = 1; i < shifts && composite; ++i) {
            x = multiply_mod(x, x, n);
            if (x == n - 1) composite = false;
        }
        if (composite) return false;
    }
    return true;
}

// Whether `factors` are primes whose product is `number`.
bool factorizes(const Factors& factors, std::uint64_t number) {
    if (factors.count == 0 || factors.count > kMaxFactors) return false;
    unsigned __int128 product = 1;
    for (std::uint32_t i = 0; i < factors.count; ++i) {
        if (!is_prime(factors.factor[i])) return false;
        product *= factors.factor[i];
        if (product > number) return false;
    }
    return product == number;
}

struct Outcome {
    std::uint64_t factorizations = 0;
    std::uint64_t valid_factorizations = 0;
    std::uint64_t ring_rounds = 0;
    std::uint64_t token_hops = 0;
    std::uint64_t masters_done = 0;
};

struct Setup {
    DispatcherChoice& dispatchers;
    std::uint64_t rings;
    std::uint64_t ring_size;
    std::uint64_t initial_token;
    std::uint64_t repetitions;
    std::uint64_t number;
    bool to_sqrt;  // factorize=sqrt
    rt::Completion<Outcome>& done;
};

// The study's supervisor: takes every factorization and every master's farewell, checking the
// factors as they come (the study asserts them there too).
class Collector final : public rt::Agent {
public:
    explicit Collector(const Setup& setup)
        : setup_(setup), expected_messages_(setup.rings * setup.repetitions + setup.rings) {
        subscribe<&Collector::on_factors>();
        subscribe<&Collector::on_master_done>();
    }

private:
    void on_factors(const Factors& factors) {
        ++outcome_.factorizations;
        if (factorizes(factors, setup_.number)) ++outcome_.valid_factorizations;
        arrived();
    }

    void on_master_done(const MasterDone& master) {
        ++outcome_.masters_done;
        outcome_.ring_rounds += master.rounds;
        outcome_.token_hops += master.hops;
        arrived();
    }

    void arrived() {
        if (++received_ == expected_messages_) setup_.done.set(outcome_);
    }

    const Setup& setup_;
    const std::uint64_t expected_messages_;
    std::uint64_t received_ = 0;
    Outcome outcome_;
};

class Worker final : public rt::Agent {
public:
    Worker(Collector& collector, bool to_sqrt) : collector_(collector), to_sqrt_(to_sqrt) {
        subscribe<&Worker::on_calc>();
    }
    std::uint64_t calcs() const noexcept { return calcs_; }
    std::int64_t factorize_ns() const noexcept { return factorize_ns_; }

private:
    void on_calc(const Calc& calc) {
        // Two clock reads per factorization of ~100 ms: nothing.
        const Clock::time_point start = Clock::now();
        const Factors factors = to_sqrt_ ? factorize_to_sqrt(calc.number) : factorize_to_n(calc.number);
        factorize_ns_ += (Clock::now() - start).count();
        // Counted before the result goes out: the kernel reads these once the collector has
        // every result, the last of which this handler sends after these writes.
        ++calcs_;
        rt::send<Factors>(collector_, factors);
    }

    Collector& collector_;
    const bool to_sqrt_;
    std::uint64_t calcs_ = 0;
    std::int64_t factorize_ns_ = 0;
};

class Link final : public rt::Agent {
public:
    explicit Link(rt::Agent& next) : next_(next) { subscribe<&Link::on_token>(); }

private:
    void on_token(const Token& token) { rt::send<Token>(next_, token.value, token.hops + 1); }

    rt::Agent& next_;
};

// The study's chain master: one per ring, for the whole run. Each repetition it asks its worker
// for a factorization (first, as the study's event-based chain master's new_ring does) and builds
// a new ring of ring_size - 1 links (in a coop of their own)
// closed by itself; it decrements the token each time the token comes round, and when 0 has
// come round the ring is deregistered and the next repetition begins.
class Master final : public rt::Agent {
public:
    Master(const Setup& setup, Worker& worker, Collector& collector, unsigned index)
        : setup_(setup), worker_(worker), collector_(collector), index_(index) {
        subscribe<&Master::on_token>();
    }

private:
    void on_start() override { new_ring(); }

    void new_ring() {
        rt::send<Calc>(worker_, setup_.number);
        DispatcherChoice& dispatchers = setup_.dispatchers;
        ring_ = &environment().introduce_coop(dispatchers.binder(index_), [&](rt::Coop& coop) {
            // Built backwards, as in the study: each link sends to the one made before it.
            rt::Agent* next = this;
            for (std::uint64_t i = 1; i < setup_.ring_size; ++i)
                next = &coop.make_agent_with_binder<Link>(dispatchers.binder(unsigned(index_ + i)), *next);
            first_ = next;
        });
        rt::send<Token>(*first_, setup_.initial_token, std::uint64_t{0});
    }

    void on_token(const Token& token) {
        const std::uint64_t hops = token.hops + 1;
        if (token.value != 0) {
            rt::send<Token>(*first_, token.value - 1, hops);
            return;
        }
        // 0 has been through every link: the ring has nothing more to do.
        ++rounds_;
        hops_ += hops;
        environment().deregister_coop(*ring_);
        if (rounds_ < setup_.repetitions) new_ring();
        else rt::send<MasterDone>(collector_, rounds_, hops_);
    }

    const Setup& setup_;
    Worker& worker_;
    Collector& collector_;
    const unsigned index_;
    rt::Coop* ring_ = nullptr;
    rt::Agent* first_ = nullptr;
    std::uint64_t rounds_ = 0;
    std::uint64_t hops_ = 0;
};

// Every agent the run creates: the collector, then per ring a master, a worker and, per
// repetition, ring_size - 1 links.
std::uint64_t agents_created(std::uint64_t rings, std::uint64_t ring_size, std::uint64_t repetitions) {
    return 1 + rings * (2 + repetitions * (ring_size - 1));
}

Result run(const Params& params) {
    const auto rings = std::uint64_t(params.integer("rings"));
    const auto ring_size = std::uint64_t(params.integer("ring_size"));
    const auto initial_token = std::uint64_t(params.integer("initial_token"));
    const auto repetitions = std::uint64_t(params.integer("repetitions"));
    const auto number = std::uint64_t(params.integer("number"));
    const bool to_sqrt = params.text("factorize") == "sqrt";

    std::vector<Worker*> workers;
    MeasuredRun<Outcome> run(params, Timed::phase_or_lifetime);
    const Setup setup{run.dispatchers(), rings, ring_size, initial_token, repetitions, number, to_sqrt, run.done()};
    Result result;
    std::uint64_t calcs = 0;
    std::int64_t factorize_ns = 0;

    // Spawning is part of the study's time: the phase begins before any agent exists.
    const Outcome outcome = run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            workers.reserve(rings);
            Collector* collector = nullptr;
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                collector = &coop.make_agent_with_binder<Collector>(dispatchers.binder(0), setup);
            });
            for (std::uint64_t r = 0; r < rings; ++r) {
                // Agent indices (binder) per ring: worker, master, then its links after the master.
                const auto index = unsigned(1 + r * (ring_size + 1));
                // The worker in a coop of its own: with a cooperation FIFO, sharing the master's
                // would queue the ring behind each factorization.
                Worker* worker = nullptr;
                env.introduce_coop(dispatchers.binder(index), [&](rt::Coop& coop) {
                    worker = &coop.make_agent_with_binder<Worker>(dispatchers.binder(index), *collector, to_sqrt);
                });
                workers.push_back(worker);
                env.introduce_coop(dispatchers.binder(index + 1), [&](rt::Coop& coop) {
                    coop.make_agent_with_binder<Master>(dispatchers.binder(index + 1), setup, *worker, *collector,
                                                        index + 1);
                });
            }
        },
        // Each worker counted its last factorization before sending its result, which the
        // collector handled before done.set(): reading the counts here is ordered after those.
        [&](Outcome&) {
            for (const Worker* worker : workers) {
                calcs += worker->calcs();
                factorize_ns += worker->factorize_ns();
            }
        });

    auto describe = [](const Outcome& outcome) {
        return "factorizations=" + std::to_string(outcome.factorizations) +
               " valid_factorizations=" + std::to_string(outcome.valid_factorizations) +
               " ring_rounds=" + std::to_string(outcome.ring_rounds) +
               " token_hops=" + std::to_string(outcome.token_hops) +
               " masters_done=" + std::to_string(outcome.masters_done);
    };
    // Per ring: the token comes round initial_token + 1 times (values initial_token..0), each
    // time handled by every one of its ring_size agents.
    const std::uint64_t rounds = rings * repetitions;
    const Outcome expected{rounds, rounds, rounds, rounds * ring_size * (initial_token + 1), rings};
    // Token hops, Calc messages, and the collector's results and farewells.
    result.messages_processed = outcome.token_hops + calcs + outcome.factorizations + outcome.masters_done;
    result.answer = describe(outcome);
    result.expected = describe(expected);
    result.metrics = {{"agents", double(agents_created(rings, ring_size, repetitions))},
                      {"factorize_ns", calcs == 0 ? 0.0 : double(factorize_ns) / double(calcs)}};
    run.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    // The schema compares as a double, which cannot tell 2^62 + 1 from 2^62.
    if (params.integer("number") > kMaxNumber)
        throw ParamError("mixed", "number",
                         "parameter 'number' must be at most 2^62 = " + std::to_string(kMaxNumber) + ", got " +
                             std::to_string(params.integer("number")));
    const auto rings = std::uint64_t(params.integer("rings"));
    const auto ring_size = std::uint64_t(params.integer("ring_size"));
    const auto repetitions = std::uint64_t(params.integer("repetitions"));
    check_thread_per_agent("mixed", params, agents_created(rings, ring_size, repetitions),
                           "rings=" + std::to_string(rings) + " ring_size=" + std::to_string(ring_size) +
                               " repetitions=" + std::to_string(repetitions));
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("rings")) * double(params.integer("repetitions")) * double(params.integer("ring_size")) * double(params.integer("initial_token") + 1);
}

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    return {
        integer_param("rings", 20, {1, 10'000}, "rings, each with its chain master and worker"),
        integer_param("ring_size", 50, {2, 100'000},
                      "agents per ring, the master included (the study's 49 chain links and a master)"),
        integer_param("initial_token", 10'000, {1, 1'000'000'000},
                      "the token's first value: it goes round initial_token + 1 times"),
        integer_param("repetitions", 5, {1, 1'000'000}, "rings built (and factorizations made) per chain master"),
        {.name = "number",
         .type = ParamType::integer,
         .default_value = std::int64_t(kStudyNumber),
         .help = "what each worker factorizes by trial division (p*q with primes p < q: about "
                 "q/2 divisions with factorize=study, max(p, sqrt(q))/2 with sqrt)",
         .minimum = 2,
         .maximum = double(kMaxNumber)},
        {.name = "factorize",
         .type = ParamType::choice,
         .default_value = std::string("study"),
         .help = "the trial division: study (the study's loop, d up to what is left of n) or sqrt "
                 "(d up to its square root: the same factors, a quarter of the divisions for the "
                 "default number)",
         .choices = {std::string("study"), std::string("sqrt")}},
    };
}

const Registration registration(Kernel{
    .name = "mixed",
    .summary = "`rings` token rings of `ring_size` agents, rebuilt `repetitions` times, beside CPU-bound "
               "factorizations: a mixed load",
    .description =
        "The study's sizes by default: 20 rings of 50 agents, a token of 10,000, 5 "
        "repetitions. A collector, and per ring a chain master and a worker. Each repetition "
        "the master sends its worker `number` to factorize (trial division: with "
        "factorize=study the study's loop, while d < n, about 165M divisions for the default "
        "number; with sqrt up to the square root, about 43M) and builds a new ring of "
        "ring_size - 1 link agents in a new coop, closed by itself; it sends a token of "
        "`initial_token` round and decrements it each time it comes back; when 0 has come "
        "round it deregisters the ring and starts the next repetition, and after the last it "
        "tells the collector. Workers send their factors to the collector, which checks them. "
        "The phase runs from spawning the first agent to the collector's last message; with "
        "clock=lifetime elapsed_ns runs from before the environment exists to after it is "
        "gone (every agent destroyed, every thread joined), as the study timed its whole "
        "program. messages_processed counts token hops, Calc messages and the collector's "
        "messages.",
    .sources = {{"libcppa_mixed", "the mixed scenario"}},
    .verifies = "rings*repetitions factorizations, each a list of primes (Miller-Rabin) whose "
                "product is `number`; rings*repetitions ring rounds; "
                "rings*repetitions*ring_size*(initial_token+1) token hops; every master done",
    .params = schema(own_params(), Timed::phase_or_lifetime, dispatcher_params()),
    .metrics = metric_schema({{.name = "agents"}, {.name = "factorize_ns"}}, Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::mixed
