// savina_concsll: Savina's Concurrent Sorted Linked List (9, concsll). Workers each send a seeded
// series of inserts, membership tests and size queries to one agent holding a sorted linked list,
// one request outstanding at a time: one mailbox under many clients, each request a list walk.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "concsll.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_concsll {
namespace {

class Worker;
using Write = savina_concsll::Write<Worker*>;
using Contains = savina_concsll::Contains<Worker*>;
using Size = savina_concsll::Size<Worker*>;

class ListAgent final : public rt::Agent {
public:
    explicit ListAgent(rt::Completion<Outcome>& done) : done_(done) {
        subscribe<&ListAgent::on_write>();
        subscribe<&ListAgent::on_contains>();
        subscribe<&ListAgent::on_size>();
        subscribe<&ListAgent::on_end>();
    }

private:
    void on_write(const Write& write);
    void on_contains(const Contains& contains);
    void on_size(const Size& size);
    void on_end(const End& end) { done_.set(list_.end(end)); }

    ListState list_;
    rt::Completion<Outcome>& done_;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(const Sizes& sizes, std::uint32_t id, ListAgent& list, Master*& master)
        : client_(sizes, id), list_(list), master_(master) {
        subscribe<&Worker::on_do_work>();
        subscribe<&Worker::on_reply>();
    }

private:
    void on_do_work(const DoWork&) { step(); }
    void on_reply(const Reply&) {
        client_.replied();
        step();
    }

    void step();

    Client client_;
    ListAgent& list_;
    Master*& master_;
};

class Master final : public rt::Agent {
public:
    Master(std::vector<Worker*>& workers, ListAgent& list) : workers_(workers), list_(list), ends_(workers.size()) {
        subscribe<&Master::on_end_work>();
    }

private:
    // Savina's master starts its workers in onPostStart: one DoWork each.
    void on_start() override {
        for (Worker* worker : workers_) rt::send<DoWork>(*worker);
    }

    void on_end_work(const EndWork& end) {
        if (ends_.ended(end)) rt::send<End>(list_, ends_.end());
    }

    std::vector<Worker*>& workers_;
    ListAgent& list_;
    Ends ends_;
};

void ListAgent::on_write(const Write& write) { rt::send<Reply>(*write.sender, list_.write(write.value)); }

void ListAgent::on_contains(const Contains& contains) {
    rt::send<Reply>(*contains.sender, list_.contains(contains.value));
}

void ListAgent::on_size(const Size& size) { rt::send<Reply>(*size.sender, list_.size()); }

void Worker::step() {
    Operation op{};
    if (!client_.next(op)) {
        rt::send<EndWork>(*master_, client_.end());
        return;
    }
    switch (op.kind) {
    case Kind::size: rt::send<Size>(list_, this); break;
    case Kind::write: rt::send<Write>(list_, this, op.value); break;
    case Kind::contains: rt::send<Contains>(list_, this, op.value); break;
    }
}

Result run(const Params& params) {
    const Sizes sizes(params);

    MeasuredRun<Outcome> run(params);
    std::vector<Worker*> workers;
    Master* master = nullptr;

    Result result;
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& list = coop.make_agent_with_binder<ListAgent>(dispatchers.binder(0), run.done());
            for (std::uint32_t i = 0; i < sizes.workers; ++i)
                workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(i + 1), sizes, i, list, master));
            // Last in the coop: every worker's start is queued before the master's sends DoWork.
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(sizes.workers + 1), workers, list);
        });
    });

    report(result, outcome, sizes);
    return result;
}

void check(const Params& params) {
    check_percents("savina_concsll", params);
    const auto workers = params.integer("workers");
    check_thread_per_agent("savina_concsll", params, std::uint64_t(workers) + 2,
                           "workers=" + std::to_string(workers));
}

const Registration registration(Kernel{
    .name = "savina_concsll",
    .summary = "`workers` workers x `messages_per_worker` requests (inserts, membership tests, "
               "sizes) to one agent holding a sorted linked list, one outstanding each",
    .description =
        "Savina's benchmark 9, Concurrent Sorted Linked List (concsll). A master starts "
        "`workers` workers; each sends `messages_per_worker` requests to one list agent, the next "
        "when the reply to the last comes: `size_percent` percent ask the list's size (a walk of "
        "it all), `write_percent` percent insert a random 32-bit value in order (a walk to its "
        "place), the rest ask whether a random value is in it (a walk until found, to the end "
        "when absent); then each tells the master it is done, and the master, once all are, "
        "tells the list to end. The phase covers the agents' creation, every message and the "
        "list's final walk (its length, order and digest), ending when the list has handled the "
        "end. Differences from Savina: each worker's operations come from its own SplitMix64 "
        "stream seeded from `seed` and its index (Savina: its PseudoRandom seeded with id + "
        "messages + percents), so values are 32-bit where Savina's are below 65,536; a "
        "membership test walks the whole list in both (Savina's too never finds its value: "
        "in its generator's one cycle the value before a drawn value decides whether that is "
        "drawn for an insert or a test, whatever the interleaving, as a replay of its defaults "
        "confirms); the master and "
        "workers are made in one coop with the list (Savina's master makes the others in its "
        "onPostStart); the phase does not cover making the runtime nor the agents' ends and "
        "destruction (Savina's clock runs until its actor system has terminated). Inserts "
        "commute, so the final list is the same in every interleaving (as in Savina); what "
        "membership tests and sizes answer depends on it and is not checked.",
    .sources = {{"savina", "9. Concurrent Sorted Linked List (concsll)"}},
    .verifies = "the counts of inserts, membership tests, size queries and replies, and the final "
                "list sorted and equal (length and digest) to a sequential replay's sorted values",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_concsll
