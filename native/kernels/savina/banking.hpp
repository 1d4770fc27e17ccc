// What every savina_banking kernel (ours, caf_savina_banking) shares: the teller's seeded
// transactions, an account's ledger, the teller's count of completions, the accounts' ends, the
// checks, the answer and its format, so that both runtimes are verified the same way.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "../../runtime/completion.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_banking {

// SplitMix64, seeded from (seed, 0); tests/oracles.py replays it.
using Random = savina::SplitMix64;
using savina::mix64;

// Every account's opening balance, in cents; amounts are below 100,000 cents (Savina's below
// 1000.0), so no balance overflows at any size the parameters allow.
inline constexpr std::int64_t kInitialBalance = 1'000'000'000'000;
inline constexpr std::uint64_t kAmountLimit = 100'000;

struct Transaction {
    std::uint32_t source;
    std::uint32_t destination;
    std::int64_t amount;
};

// Savina's teller draws a source below (accounts / 10) * 8 and a destination above it (the
// source is always lower, so the chains of waiting accounts climb and never close a cycle).
inline Transaction draw(Random& random, std::uint32_t accounts) {
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

inline std::string describe(const Outcome& o) {
    return "completed=" + std::to_string(o.completed) + " repeated=" + std::to_string(o.repeated) +
           " credits=" + std::to_string(o.credits) + " debits=" + std::to_string(o.debits) +
           " stopped=" + std::to_string(o.stopped) + " total=" + std::to_string(o.total) +
           " digest=" + std::to_string(o.digest);
}

inline std::uint64_t balance_digest(std::uint32_t account, std::int64_t balance) {
    return mix64(std::uint64_t(balance) + mix64(account));
}

// The sequential replay: the transactions in the teller's order. Integer sums commute, so each
// final balance is the same whatever order the accounts handle them in.
inline Outcome replay(std::uint32_t accounts, std::uint64_t transactions, std::uint64_t seed) {
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

// Start, then per transaction a credit, a debit, a reply and a completion, then a stop per account.
inline std::uint64_t messages(std::uint32_t accounts, std::uint64_t transactions) {
    return 1 + 4 * transactions + accounts;
}

// A run's figures from its outcome: money conserved is checked on its own, before the whole
// answer, since it holds whatever else goes wrong.
inline void report(Result& result, const std::string& kernel, const Outcome& outcome, std::uint32_t accounts,
                   std::uint64_t transactions, std::uint64_t seed) {
    if (outcome.total != std::int64_t(accounts) * kInitialBalance)
        throw VerificationError(kernel + ": money not conserved: the balances sum to " +
                                std::to_string(outcome.total) + ", not " +
                                std::to_string(std::int64_t(accounts) * kInitialBalance));
    result.messages_processed = messages(accounts, transactions);
    result.answer = describe(outcome);
    result.expected = describe(replay(accounts, transactions, seed));
}

inline Expectation expect(const Params& params) {
    const auto accounts = std::uint32_t(params.integer("accounts"));
    const auto transactions = std::uint64_t(params.integer("transactions"));
    return {describe(replay(accounts, transactions, std::uint64_t(params.integer("seed")))),
            messages(accounts, transactions)};
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("accounts", 1'000, {10, 1'000'000},
                      "account agents (Savina's A); at least 10, as Savina's draw of a source below "
                      "(accounts / 10) * 8 needs"),
        integer_param("transactions", 50'000, {0, 100'000'000}, "transactions the teller starts at once (Savina's N)"),
        integer_param("seed", 123'456, {0, 4'294'967'295},
                      "seed of the teller's transactions (Savina's teller starts its PseudoRandom at 123456)"),
    };
}

// An account's side, on any runtime: its balance and the credits and debits it handled.
class Ledger {
public:
    void credit(std::int64_t amount) noexcept {
        ++credits_;
        balance_ -= amount;
    }
    void debit(std::int64_t amount) noexcept {
        ++debits_;
        balance_ += amount;
    }
    std::int64_t balance() const noexcept { return balance_; }
    std::uint64_t credits() const noexcept { return credits_; }
    std::uint64_t debits() const noexcept { return debits_; }

private:
    std::int64_t balance_ = kInitialBalance;
    std::uint64_t credits_ = 0;
    std::uint64_t debits_ = 0;
};

// The teller's side, on any runtime: its draws and the completions it counts.
class Teller {
public:
    Teller(std::uint32_t accounts, std::uint64_t transactions, std::uint64_t seed)
        : accounts_(accounts), transactions_(transactions), random_(seed, 0), seen_(transactions, false) {}

    std::uint64_t transactions() const noexcept { return transactions_; }
    Transaction draw() { return savina_banking::draw(random_, accounts_); }

    // True once every transaction is complete: then the teller stops every account.
    bool completed(std::uint64_t id) {
        if (id >= seen_.size() || seen_[id]) ++repeated_;
        else seen_[id] = true;
        return ++completed_ == transactions_;
    }
    std::uint64_t completed() const noexcept { return completed_; }
    std::uint64_t repeated() const noexcept { return repeated_; }

private:
    const std::uint32_t accounts_;
    const std::uint64_t transactions_;
    Random random_;
    std::vector<bool> seen_;
    std::uint64_t completed_ = 0;
    std::uint64_t repeated_ = 0;
};

// The accounts' ends: the last to stop ends the phase.
struct Ending {
    std::atomic<std::uint32_t> running;
    rt::Completion<bool>& done;

    void stopped() {
        // acq_rel: the last account acquires every other's writes (its ledger) before it sets the
        // completion, which hands them on to the kernel's thread.
        if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) done.set(true);
    }
};

// The outcome, read once the last account has stopped; `ledger(i)`: account i's.
template <class LedgerOf>
Outcome outcome(const Teller& teller, const Ending& ending, std::uint32_t accounts, LedgerOf ledger) {
    Outcome o;
    o.completed = teller.completed();
    o.repeated = teller.repeated();
    o.stopped = accounts - ending.running.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < accounts; ++i) {
        const Ledger& l = ledger(i);
        o.credits += l.credits();
        o.debits += l.debits();
        o.total += l.balance();
        o.digest += balance_digest(i, l.balance());
    }
    return o;
}

// The messages, one protocol for ours and caf_savina_banking (its CAF port); `Handle` is how the
// runtime addresses an account (ours: a pointer to its agent; CAF's: caf::actor).
struct Start {};
struct Stop {};
// To a transaction's source: take the amount from your balance and give it to `destination`.
template <class Handle>
struct Credit {
    std::uint64_t id;
    std::int64_t amount;
    Handle destination;
};
// To its destination: add the amount, and reply to `creditor`.
template <class Handle>
struct Debit {
    std::uint64_t id;
    std::int64_t amount;
    Handle creditor;
};
// From the destination to the source.
struct Reply {
    std::uint64_t id;
};
// From the source to the teller: the transaction is complete.
struct Completed {
    std::uint64_t id;
};

}  // namespace labctl::kernels::savina_banking
