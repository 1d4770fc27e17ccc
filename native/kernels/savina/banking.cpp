// savina_banking: Savina's Bank Transaction (15, banking). A teller starts every transaction at
// once; each is a credit to its source account, which debits itself, asks the destination to
// take the amount and stashes everything else until the destination replies: request-reply
// between agents, with selective receive by hand.
#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_banking {
namespace {

// SplitMix64, seeded from (seed, 0); tests/oracles.py replays it.
using Random = savina::SplitMix64;
using savina::mix64;

// Every account's opening balance, in cents; amounts are below 100,000 cents (Savina's below
// 1000.0), so no balance overflows at any size the parameters allow.
constexpr std::int64_t kInitialBalance = 1'000'000'000'000;
constexpr std::uint64_t kAmountLimit = 100'000;

struct Transaction {
    std::uint32_t source;
    std::uint32_t destination;
    std::int64_t amount;
};

// Savina's teller draws a source below (accounts / 10) * 8 and a destination above it (the
// source is always lower, so the chains of waiting accounts climb and never close a cycle).
Transaction draw(Random& random, std::uint32_t accounts) {
    const auto source = std::uint32_t(random.next() % (accounts / 10 * 8));
    auto step = std::uint32_t(random.next() % (accounts - source));
    if (step == 0) step = 1;
    const auto amount = std::int64_t(random.next() % kAmountLimit);
    return {source, source + step, amount};
}

struct Outcome {
    std::uint64_t completed = 0;  // transactions the teller saw complete
    std::uint64_t repeated = 0;   // completions of a transaction already complete
    std::uint64_t credits = 0;    // credits the accounts handled
    std::uint64_t debits = 0;     // debits the accounts handled
    std::uint64_t stopped = 0;    // accounts that stopped
    std::int64_t total = 0;       // sum of the final balances
    std::uint64_t digest = 0;     // sum of mix64(balance + mix64(account))
};

std::string describe(const Outcome& o) {
    return "completed=" + std::to_string(o.completed) + " repeated=" + std::to_string(o.repeated) +
           " credits=" + std::to_string(o.credits) + " debits=" + std::to_string(o.debits) +
           " stopped=" + std::to_string(o.stopped) + " total=" + std::to_string(o.total) +
           " digest=" + std::to_string(o.digest);
}

std::uint64_t balance_digest(std::uint32_t account, std::int64_t balance) {
    return mix64(std::uint64_t(balance) + mix64(account));
}

// The sequential replay: the transactions in the teller's order. Integer sums commute, so each
// final balance is the same whatever order the accounts handle them in.
Outcome replay(std::uint32_t accounts, std::uint64_t transactions, std::uint64_t seed) {
    std::vector<std::int64_t> balances(accounts, kInitialBalance);
    Random random(seed, 0);
    for (std::uint64_t t = 0; t < transactions; ++t) {
        const Transaction tx = draw(random, accounts);
        balances[tx.source] -= tx.amount;
        balances[tx.destination] += tx.amount;
    }
    Outcome outcome;
    outcome.completed = outcome.credits = outcome.debits = transactions;
    outcome.stopped = accounts;
    for (std::uint32_t i = 0; i < accounts; ++i) {
        outcome.total += balances[i];
        outcome.digest += balance_digest(i, balances[i]);
    }
    return outcome;
}

class Account;
class Teller;

struct Start {};
struct Stop {};
// To a transaction's source: take the amount from your balance and give it to `destination`.
struct Credit {
    std::uint64_t id;
    std::int64_t amount;
    Account* destination;
};
// To its destination: add the amount, and reply to `creditor`.
struct Debit {
    std::uint64_t id;
    std::int64_t amount;
    Account* creditor;
};
// From the destination to the source.
struct Reply {
    std::uint64_t id;
};
// From the source to the teller: the transaction is complete.
struct Completed {
    std::uint64_t id;
};

// The accounts' ends: the last to stop ends the phase.
struct Ending {
    std::atomic<std::uint32_t> running;
    rt::Completion<bool>& done;
};

class Account final : public rt::Agent {
public:
    Account(Teller*& teller, Ending& ending) : teller_(teller), ending_(ending) {
        subscribe<&Account::on_credit>();
        subscribe<&Account::on_debit>();
        subscribe<&Account::on_reply>();
        subscribe<&Account::on_stop>();
    }

    // Read after the run: every write happens before this account's stop count-down, which the
    // last one's completion hands on to the kernel.
    std::int64_t balance() const noexcept { return balance_; }
    std::uint64_t credits() const noexcept { return credits_; }
    std::uint64_t debits() const noexcept { return debits_; }

private:
    using Stashed = std::variant<Credit, Debit, Stop>;

    // While it waits for a reply, an account keeps every other message, in arrival order, and
    // handles them once the reply has come (Savina's manual stash).
    void on_credit(const Credit& credit) {
        if (waiting_) stash_.emplace_back(credit);
        else credit_now(credit);
    }
    void on_debit(const Debit& debit) {
        if (waiting_) stash_.emplace_back(debit);
        else debit_now(debit);
    }
    void on_stop(const Stop& stop) {
        if (waiting_) stash_.emplace_back(stop);
        else stop_now();
    }
    void on_reply(const Reply& reply);

    void credit_now(const Credit& credit) {
        ++credits_;
        balance_ -= credit.amount;
        waiting_ = true;
        rt::send<Debit>(*credit.destination, credit.id, credit.amount, this);
    }
    void debit_now(const Debit& debit) {
        ++debits_;
        balance_ += debit.amount;
        rt::send<Reply>(*debit.creditor, debit.id);
    }
    void stop_now() {
        if (ending_.running.fetch_sub(1, std::memory_order_acq_rel) == 1) ending_.done.set(true);
    }

    Teller*& teller_;
    Ending& ending_;
    std::int64_t balance_ = kInitialBalance;
    std::uint64_t credits_ = 0;
    std::uint64_t debits_ = 0;
    bool waiting_ = false;
    std::deque<Stashed> stash_;
};

class Teller final : public rt::Agent {
public:
    Teller(std::vector<Account*>& accounts, std::uint64_t transactions, std::uint64_t seed)
        : accounts_(accounts), transactions_(transactions), random_(seed, 0), seen_(transactions, false) {
        subscribe<&Teller::on_start_message>();
        subscribe<&Teller::on_completed>();
    }

    std::uint64_t completed() const noexcept { return completed_; }
    std::uint64_t repeated() const noexcept { return repeated_; }

private:
    // Savina's StartMessage: every transaction's credit sent at once.
    void on_start_message(const Start&) {
        for (std::uint64_t t = 0; t < transactions_; ++t) {
            const Transaction tx = draw(random_, std::uint32_t(accounts_.size()));
            rt::send<Credit>(*accounts_[tx.source], t, tx.amount, accounts_[tx.destination]);
        }
        if (transactions_ == 0) stop_all();
    }

    void on_completed(const Completed& done) {
        if (seen_[done.id]) ++repeated_;
        seen_[done.id] = true;
        if (++completed_ == transactions_) stop_all();
    }

    void stop_all() {
        for (Account* account : accounts_) rt::send<Stop>(*account);
    }

    std::vector<Account*>& accounts_;
    const std::uint64_t transactions_;
    Random random_;
    std::vector<bool> seen_;
    std::uint64_t completed_ = 0;
    std::uint64_t repeated_ = 0;
};

void Account::on_reply(const Reply& reply) {
    // The reply's id, not the one awaited, goes to the teller: a reply for another transaction
    // shows in the answer as a transaction completed twice and one never.
    waiting_ = false;
    rt::send<Completed>(*teller_, reply.id);
    while (!waiting_ && !stash_.empty()) {
        const Stashed next = stash_.front();
        stash_.pop_front();
        if (const auto* credit = std::get_if<Credit>(&next)) credit_now(*credit);
        else if (const auto* debit = std::get_if<Debit>(&next)) debit_now(*debit);
        else stop_now();
    }
}

// Start, then per transaction a credit, a debit, a reply and a completion, then a stop per account.
std::uint64_t messages(std::uint32_t accounts, std::uint64_t transactions) {
    return 1 + 4 * transactions + accounts;
}

Result run(const Params& params) {
    const auto accounts = std::uint32_t(params.integer("accounts"));
    const auto transactions = std::uint64_t(params.integer("transactions"));
    const auto seed = std::uint64_t(params.integer("seed"));

    std::vector<Account*> bank;
    Teller* teller = nullptr;
    MeasuredRun<bool> run(params);
    Ending ending{{accounts}, run.done()};
    Result result;
    Outcome outcome;

    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                for (std::uint32_t i = 0; i < accounts; ++i)
                    bank.push_back(&coop.make_agent_with_binder<Account>(dispatchers.binder(i + 1), teller, ending));
                teller = &coop.make_agent_with_binder<Teller>(dispatchers.binder(0), bank, transactions, seed);
            });
            rt::send<Start>(*teller);
        },
        [&](bool) {
            outcome.completed = teller->completed();
            outcome.repeated = teller->repeated();
            outcome.stopped = accounts - ending.running.load(std::memory_order_acquire);
            for (std::uint32_t i = 0; i < accounts; ++i) {
                outcome.credits += bank[i]->credits();
                outcome.debits += bank[i]->debits();
                outcome.total += bank[i]->balance();
                outcome.digest += balance_digest(i, bank[i]->balance());
            }
        });

    const Outcome expected = replay(accounts, transactions, seed);
    // Money is conserved whatever else goes wrong: checked on its own, before the whole answer.
    if (outcome.total != std::int64_t(accounts) * kInitialBalance)
        throw VerificationError("savina_banking: money not conserved: the balances sum to " +
                                std::to_string(outcome.total) + ", not " +
                                std::to_string(std::int64_t(accounts) * kInitialBalance));
    result.messages_processed = messages(accounts, transactions);
    result.answer = describe(outcome);
    result.expected = describe(expected);
    return result;
}

Expectation expect(const Params& params) {
    const auto accounts = std::uint32_t(params.integer("accounts"));
    const auto transactions = std::uint64_t(params.integer("transactions"));
    return {describe(replay(accounts, transactions, std::uint64_t(params.integer("seed")))),
            messages(accounts, transactions)};
}

void check(const Params& params) {
    const auto accounts = params.integer("accounts");
    check_thread_per_agent("savina_banking", params, std::uint64_t(accounts) + 1,
                           "accounts=" + std::to_string(accounts));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("accounts", 1'000, {10, 1'000'000},
                      "account agents (Savina's A); at least 10, as Savina's draw of a source below "
                      "(accounts / 10) * 8 needs"),
        integer_param("transactions", 50'000, {0, 100'000'000}, "transactions the teller starts at once (Savina's N)"),
        integer_param("seed", 123'456, {0, 4'294'967'295},
                      "seed of the teller's transactions (Savina's teller starts its PseudoRandom at 123456)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_banking",
    .summary = "a teller starts `transactions` transfers at once between `accounts` account "
               "agents, each a credit, a debit and replies, an account stashing messages while it waits",
    .description =
        "Savina's benchmark 15, Bank Transaction (banking). A teller sends every transaction's "
        "credit at once to its source account (a seeded draw: a source below (accounts / 10) * 8, "
        "a destination above it, an amount below 1000.00); the source takes the amount from its "
        "balance, sends a debit to the destination and, until the destination's reply comes, "
        "stashes every other message it receives; the destination adds the amount and replies; "
        "the source reports the transaction complete to the teller and handles its stash in "
        "order. When all are complete the teller stops every account. The phase covers the "
        "agents' creation, the start, every message, and ends when the last account has handled "
        "its stop. Differences from Savina: amounts are integer cents and balances 64-bit "
        "integers starting at 10^10 units, amounts uniform below 1000.00 (Savina: doubles, "
        "Double.MAX_VALUE / (A * N) each, amounts 1000 / (v + 1) for its generator's 16-bit v, "
        "most below 1), so "
        "sums are exact and each final balance is the same in every schedule; the teller's draws "
        "come from a SplitMix64 stream seeded from `seed` (Savina: its PseudoRandom(123456)); "
        "messages carry a transaction id (Savina's replies carry none), so that the teller can "
        "count each completion once; a stashed message is handled in place once the reply has "
        "come (Savina re-sends it to the account itself, one more message each, a number that "
        "depends on the schedule); the teller and accounts are made in one coop (Savina's teller "
        "makes the accounts); the phase does not cover making the runtime nor the agents' ends "
        "and destruction (Savina's clock runs until its actor system has terminated).",
    .sources = {{"savina", "15. Bank Transaction (banking)"}},
    .verifies = "money is conserved (the balances' sum unchanged), every transaction completed "
                "once, credits and debits counted, every account stopped, and each final balance "
                "equal to a sequential replay's",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_banking
