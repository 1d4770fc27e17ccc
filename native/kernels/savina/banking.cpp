// savina_banking: Savina's Bank Transaction (15, banking). A teller starts every transaction at
// once; each is a credit to its source account, which debits itself, asks the destination to
// take the amount and stashes everything else until the destination replies: request-reply
// between agents, with selective receive by hand.
#include <cstdint>
#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "banking.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_banking {
namespace {

class Account;
using Credit = savina_banking::Credit<Account*>;
using Debit = savina_banking::Debit<Account*>;

class TellerAgent;

class Account final : public rt::Agent {
public:
    Account(TellerAgent*& teller, Ending& ending) : teller_(teller), ending_(ending) {
        subscribe<&Account::on_credit>();
        subscribe<&Account::on_debit>();
        subscribe<&Account::on_reply>();
        subscribe<&Account::on_stop>();
    }

    // Read after the run: every write happens before this account's stop count-down, which the
    // last one's completion hands on to the kernel.
    const Ledger& ledger() const noexcept { return ledger_; }

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
        else ending_.stopped();
    }
    void on_reply(const Reply& reply);

    void credit_now(const Credit& credit) {
        ledger_.credit(credit.amount);
        waiting_ = true;
        rt::send<Debit>(*credit.destination, credit.id, credit.amount, this);
    }
    void debit_now(const Debit& debit) {
        ledger_.debit(debit.amount);
        rt::send<Reply>(*debit.creditor, debit.id);
    }

    TellerAgent*& teller_;
    Ending& ending_;
    Ledger ledger_;
    bool waiting_ = false;
    std::deque<Stashed> stash_;
};

class TellerAgent final : public rt::Agent {
public:
    TellerAgent(std::vector<Account*>& accounts, std::uint64_t transactions, std::uint64_t seed)
        : accounts_(accounts), teller_(std::uint32_t(accounts.size()), transactions, seed) {
        subscribe<&TellerAgent::on_start_message>();
        subscribe<&TellerAgent::on_completed>();
    }

    const Teller& teller() const noexcept { return teller_; }

private:
    // Savina's StartMessage: every transaction's credit sent at once.
    void on_start_message(const Start&) {
        for (std::uint64_t t = 0; t < teller_.transactions(); ++t) {
            const Transaction tx = teller_.draw();
            rt::send<Credit>(*accounts_[tx.source], t, tx.amount, accounts_[tx.destination]);
        }
        if (teller_.transactions() == 0) stop_all();
    }

    void on_completed(const Completed& done) {
        if (teller_.completed(done.id)) stop_all();
    }

    void stop_all() {
        for (Account* account : accounts_) rt::send<Stop>(*account);
    }

    std::vector<Account*>& accounts_;
    Teller teller_;
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
        else ending_.stopped();
    }
}

Result run(const Params& params) {
    const auto accounts = std::uint32_t(params.integer("accounts"));
    const auto transactions = std::uint64_t(params.integer("transactions"));
    const auto seed = std::uint64_t(params.integer("seed"));

    std::vector<Account*> bank;
    TellerAgent* teller = nullptr;
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
                // After the accounts: the teller takes the bank's size when it is made.
                teller = &coop.make_agent_with_binder<TellerAgent>(dispatchers.binder(0), bank, transactions, seed);
            });
            rt::send<Start>(*teller);
        },
        [&](bool) {
            outcome = savina_banking::outcome(teller->teller(), ending, accounts,
                                              [&](std::uint32_t i) -> const Ledger& { return bank[i]->ledger(); });
        });

    report(result, "savina_banking", outcome, accounts, transactions, seed);
    return result;
}

void check(const Params& params) {
    const auto accounts = params.integer("accounts");
    check_thread_per_agent("savina_banking", params, std::uint64_t(accounts) + 1,
                           "accounts=" + std::to_string(accounts));
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
