// caf_savina_banking: savina_banking on CAF 0.17. A teller starts every transaction at once; each
// is a credit to its source account, which debits itself, asks the destination to take the
// amount and, until the destination replies, becomes a behavior that skips every other message.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/banking.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_banking {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Stop&) {
    return f(caf::meta::type_name("Stop"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Credit<caf::actor>& x) {
    return f(caf::meta::type_name("Credit"), x.id, x.amount, x.destination);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Debit<caf::actor>& x) {
    return f(caf::meta::type_name("Debit"), x.id, x.amount, x.creditor);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Reply& x) {
    return f(caf::meta::type_name("Reply"), x.id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Completed& x) {
    return f(caf::meta::type_name("Completed"), x.id);
}

}  // namespace labctl::kernels::savina_banking

namespace labctl::kernels::caf_savina_banking {
namespace {

using savina_banking::Completed;
using savina_banking::Ending;
using savina_banking::Ledger;
using savina_banking::Outcome;
using savina_banking::Reply;
using savina_banking::Start;
using savina_banking::Stop;
using savina_banking::Transaction;
using Credit = savina_banking::Credit<caf::actor>;
using Debit = savina_banking::Debit<caf::actor>;

class Account final : public caf::event_based_actor {
public:
    Account(caf::actor_config& config, caf_support::CafRun& run, caf::actor teller, Ending& ending)
        : caf::event_based_actor(config), teller_(std::move(teller)), ending_(ending) {
        run.watch(*this);
    }

    // Read after the run: every write happens before this account's stop count-down, which the
    // last one's completion hands on to the kernel.
    const Ledger& ledger() const noexcept { return ledger_; }

    caf::behavior make_behavior() override {
        // Savina's become variant: after a credit, a behavior that takes only the reply, over the
        // one kept beneath it; every other message is skipped, left in the mailbox in its order,
        // and handled after the reply unbecomes (Akka's stash and unstashAll). Made once: a
        // behavior is a handle, so each become shares it.
        waiting_ = caf::behavior{
            [this](const Reply& reply) {
                // The reply's id, not the one awaited, goes to the teller: a reply for another
                // transaction shows in the answer as one completed twice and one never.
                send(teller_, Completed{reply.id});
                unbecome();
            },
            [](const Credit&) { return caf::skip; },
            [](const Debit&) { return caf::skip; },
            [](const Stop&) { return caf::skip; },
        };
        return {
            [this](const Credit& credit) {
                ledger_.credit(credit.amount);
                send(credit.destination, Debit{credit.id, credit.amount, caf::actor(this)});
                become(caf::keep_behavior, waiting_);
            },
            [this](const Debit& debit) {
                ledger_.debit(debit.amount);
                send(debit.creditor, Reply{debit.id});
            },
            [this](const Stop&) {
                ending_.stopped();
                quit();
            },
        };
    }

    // The handle to the teller, and the waiting behavior (which captures this), let go, or
    // neither actor is ever freed.
    void on_exit() override {
        teller_ = nullptr;
        waiting_ = caf::behavior{};
    }

private:
    caf::actor teller_;
    Ending& ending_;
    Ledger ledger_;
    caf::behavior waiting_;
};

class TellerActor final : public caf::event_based_actor {
public:
    // `accounts`: every account's handle, the kernel's, filled in before the start is sent.
    TellerActor(caf::actor_config& config, caf_support::CafRun& run, const std::vector<caf::actor>& accounts,
                std::uint32_t count, std::uint64_t transactions, std::uint64_t seed)
        : caf::event_based_actor(config), accounts_(accounts), teller_(count, transactions, seed) {
        run.watch(*this);
    }

    // Read after the run (the last account's stop follows the teller's last write).
    const savina_banking::Teller& teller() const noexcept { return teller_; }

    caf::behavior make_behavior() override {
        return {
            // Savina's StartMessage: every transaction's credit sent at once.
            [this](const Start&) {
                for (std::uint64_t t = 0; t < teller_.transactions(); ++t) {
                    const Transaction tx = teller_.draw();
                    send(accounts_[tx.source], Credit{t, tx.amount, accounts_[tx.destination]});
                }
                if (teller_.transactions() == 0) stop_all();
            },
            [this](const Completed& done) {
                if (teller_.completed(done.id)) stop_all();
            },
        };
    }

private:
    void stop_all() {
        for (const caf::actor& account : accounts_) send(account, Stop{});
    }

    const std::vector<caf::actor>& accounts_;
    savina_banking::Teller teller_;
};

Result run(const Params& params) {
    const auto accounts = std::uint32_t(params.integer("accounts"));
    const auto transactions = std::uint64_t(params.integer("transactions"));
    const auto seed = std::uint64_t(params.integer("seed"));

    rt::Completion<bool> done;
    Ending ending{{accounts}, done};
    std::vector<caf::actor> bank;  // outlives the actor system, as the teller reads it
    bank.reserve(accounts);
    std::vector<Account*> ledgers;
    ledgers.reserve(accounts);
    caf_support::CafRun caf(params, done);
    caf.reserve(accounts + 1);

    // As savina_banking's phase: the actors' creation, the start, every message, until the last
    // account has handled its stop (the actor system is started before it).
    caf_support::CafPhase phase(caf);
    const caf::actor handle = caf.system().spawn<TellerActor>(std::ref(caf), std::cref(bank), accounts, transactions, seed);
    TellerActor& teller = caf.keep<TellerActor>(handle);
    for (std::uint32_t i = 0; i < accounts; ++i) {
        bank.push_back(caf.system().spawn<Account>(std::ref(caf), handle, std::ref(ending)));
        ledgers.push_back(&caf.keep<Account>(bank.back()));
    }
    // The handles are all written by now, and this send orders those writes before the teller reads them.
    caf::anon_send(handle, Start{});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    const Outcome outcome = savina_banking::outcome(teller.teller(), ending, accounts,
                                                    [&](std::uint32_t i) -> const Ledger& { return ledgers[i]->ledger(); });
    caf.stop();

    savina_banking::report(result, "caf_savina_banking", outcome, accounts, transactions, seed);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_banking",
    .summary = "savina_banking on CAF 0.17: a teller starts `transactions` transfers at once between "
               "`accounts` account actors, an account skipping other messages while it awaits a reply",
    .description =
        "As savina_banking (Savina's 15, Bank Transaction), on CAF 0.17: the kernel spawns the "
        "teller and `accounts` accounts and sends the teller Start; the teller sends every "
        "transaction's credit at once to its source account (the same seeded draws as ours); the "
        "source takes the amount from its balance, sends a debit with its own handle to the "
        "destination and becomes, over the behavior kept beneath, one that takes only the reply "
        "and skips credits, debits and stops, which stay in its mailbox in their order; the "
        "destination adds the amount and replies; on the reply the source tells the teller the "
        "transaction is complete and unbecomes, and CAF hands it the skipped messages again. When "
        "all are complete the teller stops every account, which quits. That is Savina's become "
        "variant (BankingAkkaBecomeActorBenchmark: context.become, stash, unstashAll) in CAF's "
        "idiom; ours follows its manual-stash variant. The teller and accounts read each other's "
        "handles from a list the kernel owns. The phase runs from the first spawn to the last "
        "account's stop (the actor system is started before it). Differences from Savina as "
        "savina_banking's, and: a skipped message is looked at again after every message the "
        "account handles (CAF 0.17's mailbox puts its cache of skipped messages back in front "
        "after each one, as Akka's unstashAll puts the stash back), where ours holds each once; "
        "the kernel spawns the accounts (Savina's teller makes them).",
    .sources = {{"savina", "15. Bank Transaction (banking)"}},
    .verifies = "money is conserved (the balances' sum unchanged), every transaction completed "
                "once, credits and debits counted, every account stopped, and each final balance "
                "equal to a sequential replay's",
    .params = schema(savina_banking::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_banking
