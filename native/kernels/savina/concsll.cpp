// savina_concsll: Savina's Concurrent Sorted Linked List (9, concsll). Workers each send a seeded
// series of inserts, membership tests and size queries to one agent holding a sorted linked list,
// one request outstanding at a time: one mailbox under many clients, each request a list walk.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <algorithm>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_concsll {
namespace {

// SplitMix64: each worker's own stream, seeded from (seed, worker); tests/oracles.py replays it.
using Random = savina::SplitMix64;
using savina::mix64;

struct Sizes {
    std::uint32_t workers;
    std::uint64_t messages_per_worker;
    std::uint32_t write_percent;
    std::uint32_t size_percent;
    std::uint64_t seed;

    explicit Sizes(const Params& params)
        : workers(std::uint32_t(params.integer("workers"))),
          messages_per_worker(std::uint64_t(params.integer("messages_per_worker"))),
          write_percent(std::uint32_t(params.integer("write_percent"))),
          size_percent(std::uint32_t(params.integer("size_percent"))),
          seed(std::uint64_t(params.integer("seed"))) {}
};

// A worker's next operation, as Savina draws it: a number below 100; under size_percent a size
// query, under size_percent + write_percent an insert of a value, else a membership test.
enum class Kind : std::uint8_t { size, write, contains };
struct Operation {
    Kind kind;
    std::uint32_t value;
};

Operation next_operation(Random& random, const Sizes& sizes) {
    const std::uint64_t draw = random.next() % 100;
    if (draw < sizes.size_percent) return {Kind::size, 0};
    if (draw < sizes.size_percent + sizes.write_percent) return {Kind::write, std::uint32_t(random.next() >> 32)};
    return {Kind::contains, std::uint32_t(random.next() >> 32)};
}

struct Outcome {
    std::uint64_t contains = 0;
    std::uint64_t writes = 0;
    std::uint64_t sizes = 0;
    std::uint64_t replies = 0;
    std::uint64_t length = 0;
    std::uint64_t unsorted = 0;  // adjacent pairs out of order in the final list
    std::uint64_t digest = 0;    // sum of mix64(position << 32 | value) over the final list
};

std::string describe(const Outcome& o) {
    return "contains=" + std::to_string(o.contains) + " writes=" + std::to_string(o.writes) +
           " sizes=" + std::to_string(o.sizes) + " replies=" + std::to_string(o.replies) +
           " length=" + std::to_string(o.length) + " unsorted=" + std::to_string(o.unsorted) +
           " digest=" + std::to_string(o.digest);
}

// The sequential replay: every value inserted, in any order, sorted. Inserts commute, so the
// final list is the same whatever the interleaving.
Outcome replay(const Sizes& sizes) {
    Outcome outcome;
    std::vector<std::uint32_t> values;
    for (std::uint32_t w = 0; w < sizes.workers; ++w) {
        Random random(sizes.seed, w);
        for (std::uint64_t m = 0; m < sizes.messages_per_worker; ++m) {
            const Operation op = next_operation(random, sizes);
            if (op.kind == Kind::write) {
                values.push_back(op.value);
                ++outcome.writes;
            } else if (op.kind == Kind::size) {
                ++outcome.sizes;
            } else {
                ++outcome.contains;
            }
        }
    }
    std::sort(values.begin(), values.end());
    outcome.replies = outcome.contains + outcome.writes + outcome.sizes;
    outcome.length = values.size();
    for (std::uint64_t i = 0; i < values.size(); ++i) outcome.digest += mix64((i << 32) | values[i]);
    return outcome;
}

// Savina's SortedLinkedList: an insert after the last element not greater than it, a membership
// test walking until it finds the value (to the end when it is absent), a size that walks it all.
class SortedList {
public:
    SortedList() = default;
    SortedList(const SortedList&) = delete;
    SortedList& operator=(const SortedList&) = delete;
    ~SortedList() {
        while (head_ != nullptr) {
            Node* next = head_->next;
            delete head_;
            head_ = next;
        }
    }

    void add(std::uint32_t value) {
        Node* node = new Node{value, nullptr};
        if (head_ == nullptr || value < head_->value) {
            node->next = head_;
            head_ = node;
            return;
        }
        Node* before = head_;
        while (before->next != nullptr && !(value < before->next->value)) before = before->next;
        node->next = before->next;
        before->next = node;
    }

    bool contains(std::uint32_t value) const {
        for (const Node* n = head_; n != nullptr; n = n->next)
            if (n->value == value) return true;
        return false;
    }

    std::uint64_t size() const {
        std::uint64_t count = 0;
        for (const Node* n = head_; n != nullptr; n = n->next) ++count;
        return count;
    }

    // The final list's length, order and digest, into `outcome`.
    void summarise(Outcome& outcome) const {
        std::uint64_t i = 0;
        for (const Node* n = head_; n != nullptr; n = n->next, ++i) {
            if (n->next != nullptr && n->next->value < n->value) ++outcome.unsorted;
            outcome.digest += mix64((i << 32) | n->value);
        }
        outcome.length = i;
    }

private:
    struct Node {
        std::uint32_t value;
        Node* next;
    };
    Node* head_ = nullptr;
};

struct DoWork {};
struct Reply {
    std::uint64_t value;
};
struct EndWork {
    std::uint64_t replies;
};
struct End {
    std::uint64_t replies;
};

class Worker;

struct Write {
    Worker* sender;
    std::uint32_t value;
};
struct Contains {
    Worker* sender;
    std::uint32_t value;
};
struct Size {
    Worker* sender;
};

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

    void on_end(const End& end) {
        outcome_.replies = end.replies;
        list_.summarise(outcome_);
        done_.set(outcome_);
    }

    SortedList list_;
    rt::Completion<Outcome>& done_;
    Outcome outcome_;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(const Sizes& sizes, std::uint32_t id, ListAgent& list, Master*& master)
        : random_(sizes.seed, id), sizes_(sizes), list_(list), master_(master) {
        subscribe<&Worker::on_do_work>();
        subscribe<&Worker::on_reply>();
    }

private:
    void on_do_work(const DoWork&) { step(); }
    void on_reply(const Reply&) {
        ++replies_;
        step();
    }

    void step();

    Random random_;
    const Sizes& sizes_;
    std::uint64_t sent_ = 0;
    std::uint64_t replies_ = 0;
    ListAgent& list_;
    Master*& master_;
};

class Master final : public rt::Agent {
public:
    Master(std::vector<Worker*>& workers, ListAgent& list) : workers_(workers), list_(list) {
        subscribe<&Master::on_end_work>();
    }

private:
    // Savina's master starts its workers in onPostStart: one DoWork each.
    void on_start() override {
        for (Worker* worker : workers_) rt::send<DoWork>(*worker);
    }

    void on_end_work(const EndWork& end) {
        replies_ += end.replies;
        if (++ended_ == workers_.size()) rt::send<End>(list_, replies_);
    }

    std::vector<Worker*>& workers_;
    ListAgent& list_;
    std::uint64_t ended_ = 0;
    std::uint64_t replies_ = 0;
};

void ListAgent::on_write(const Write& write) {
    ++outcome_.writes;
    list_.add(write.value);
    rt::send<Reply>(*write.sender, write.value);
}

void ListAgent::on_contains(const Contains& contains) {
    ++outcome_.contains;
    rt::send<Reply>(*contains.sender, list_.contains(contains.value) ? 1u : 0u);
}

void ListAgent::on_size(const Size& size) {
    ++outcome_.sizes;
    rt::send<Reply>(*size.sender, list_.size());
}

void Worker::step() {
    if (sent_ == sizes_.messages_per_worker) {
        rt::send<EndWork>(*master_, replies_);
        return;
    }
    ++sent_;
    const Operation op = next_operation(random_, sizes_);
    switch (op.kind) {
    case Kind::size: rt::send<Size>(list_, this); break;
    case Kind::write: rt::send<Write>(list_, this, op.value); break;
    case Kind::contains: rt::send<Contains>(list_, this, op.value); break;
    }
}

// DoWork per worker, a request and a reply per operation, EndWork per worker, End.
std::uint64_t messages(const Sizes& sizes) {
    return 2 * std::uint64_t(sizes.workers) * (sizes.messages_per_worker + 1) + 1;
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

    result.messages_processed = messages(sizes);
    result.answer = describe(outcome);
    result.expected = describe(replay(sizes));
    return result;
}

Expectation expect(const Params& params) {
    const Sizes sizes(params);
    return {describe(replay(sizes)), messages(sizes)};
}

void check(const Params& params) {
    const auto write = params.integer("write_percent");
    const auto size = params.integer("size_percent");
    if (write + size > 100)
        throw ParamError("savina_concsll", "write_percent",
                         "parameter 'write_percent' (" + std::to_string(write) + ") plus 'size_percent' (" +
                             std::to_string(size) + ") must be at most 100");
    const auto workers = params.integer("workers");
    check_thread_per_agent("savina_concsll", params, std::uint64_t(workers) + 2,
                           "workers=" + std::to_string(workers));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 20, {1, 10'000},
                      "worker agents sending requests to the list (Savina's NUM_ENTITIES)"),
        integer_param("messages_per_worker", 8'000, {0, 100'000'000},
                      "requests each worker sends, one at a time (Savina's NUM_MSGS_PER_WORKER)"),
        integer_param("write_percent", 10, {0, 100},
                      "percent of the requests that insert a value (Savina's WRITE_PERCENTAGE)"),
        integer_param("size_percent", 1, {0, 100},
                      "percent of the requests that ask the list's size (Savina's SIZE_PERCENTAGE); the "
                      "rest test whether a value is in it"),
        integer_param("seed", 1, {0, 4'294'967'295},
                      "seed of the workers' operations (worker i's stream from seed and i)"),
    };
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
