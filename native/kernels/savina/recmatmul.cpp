// savina_recmatmul: Savina's 23. Recursive Matrix Multiplication (recmatmul). A master hands out
// work items (a product of two square blocks into a block of C) to `workers` workers; a worker
// splits an item larger than `threshold` elements into its 8 half-size sub-products, which it
// sends back to the master to hand out, and multiplies a small one itself. Measures a master
// handing out coarse, uneven work to a pool of workers.
#include <bit>
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

namespace labctl::kernels::savina_recmatmul {
namespace {

constexpr const char* kKernel = "savina_recmatmul";

// The most work items a run may hand out (a small threshold on a large matrix makes 8 per level).
constexpr std::uint64_t kMaxWorkItems = 10'000'000;

struct Setup {
    std::uint32_t n;          // Savina's DATA_LENGTH
    std::uint64_t threshold;  // Savina's BLOCK_THRESHOLD: an item of more elements is split
    std::uint32_t workers;    // Savina's NUM_WORKERS
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("data_length")), std::uint64_t(params.integer("threshold")),
            std::uint32_t(params.integer("workers"))};
}

// The matrices, row-major, as Savina's MatMulConfig fills them: A[i][j] = i, B[i][j] = j.
struct Matrices {
    std::uint32_t n;
    std::vector<double> a, b, c;
    explicit Matrices(std::uint32_t size) : n(size), a(std::size_t(size) * size), b(a.size()), c(a.size(), 0.0) {
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t j = 0; j < n; ++j) {
                a[std::size_t(i) * n + j] = double(i);
                b[std::size_t(i) * n + j] = double(j);
            }
    }
};

// A work item, as Savina's WorkMessage less its priority: C[srC.., scC..] += A[srA.., scA..] x
// B[srB.., scB..] over dim x dim blocks of num_blocks = dim * dim elements.
struct Work {
    std::uint32_t sr_a, sc_a, sr_b, sc_b, sr_c, sc_c;
    std::uint64_t num_blocks;
    std::uint32_t dim;
};

// Savina's split of an item into its 8 sub-products, in Savina's order.
template <class Emit>
void split(const Work& w, Emit&& emit) {
    const std::uint32_t h = w.dim / 2;
    const std::uint64_t quarter = w.num_blocks / 4;
    // (row half of A and C, inner half, column half of B and C), as Savina's eight messages.
    constexpr std::uint32_t order[8][3] = {{0, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 1},
                                           {1, 0, 0}, {1, 1, 0}, {1, 0, 1}, {1, 1, 1}};
    for (const auto& o : order) {
        const std::uint32_t r = o[0] * h, k = o[1] * h, c = o[2] * h;
        emit(Work{w.sr_a + r, w.sc_a + k, w.sr_b + k, w.sc_b + c, w.sr_c + r, w.sc_c + c, quarter, h});
    }
}

// Savina's leaf: for each C element of the block, in row then column order, the products added
// to it in k order (each element's running sum kept in a register, stored once: the same
// additions in the same order as Savina's C(i)(j) += ...).
void multiply(const Work& w, const double* a, const double* b, double* c, std::uint32_t n) noexcept {
    for (std::uint32_t i = w.sr_c; i < w.sr_c + w.dim; ++i) {
        const double* a_row = a + std::size_t(i) * n + w.sc_a;
        for (std::uint32_t j = w.sc_c; j < w.sc_c + w.dim; ++j) {
            const double* b_col = b + std::size_t(w.sr_b) * n + j;
            double sum = c[std::size_t(i) * n + j];
            for (std::uint32_t k = 0; k < w.dim; ++k) sum += a_row[k] * b_col[std::size_t(k) * n];
            c[std::size_t(i) * n + j] = sum;
        }
    }
}

Work whole(std::uint32_t n) { return Work{0, 0, 0, 0, 0, 0, std::uint64_t(n) * n, n}; }

// Work items of an item: itself, and its sub-products' if it is split.
std::uint64_t items_of(std::uint64_t num_blocks, std::uint64_t threshold) {
    std::uint64_t items = 1, level = 1;
    while (num_blocks > threshold) {
        num_blocks /= 4;
        level *= 8;
        items += level;
    }
    return items;
}

std::uint64_t leaves_of(std::uint64_t num_blocks, std::uint64_t threshold) {
    std::uint64_t leaves = 1;
    for (; num_blocks > threshold; num_blocks /= 4) leaves *= 8;
    return leaves;
}

// The sequential program: the same split, depth first in Savina's order, and the same leaf
// multiplication, in one thread.
void multiply_recursively(const Work& w, std::uint64_t threshold, Matrices& m) {
    if (w.num_blocks > threshold) split(w, [&](const Work& sub) { multiply_recursively(sub, threshold, m); });
    else multiply(w, m.a.data(), m.b.data(), m.c.data(), m.n);
}

struct Answer {
    std::uint64_t items = 0;      // work items done (split or multiplied)
    std::uint64_t leaves = 0;     // of them multiplied
    std::uint64_t hash = savina::kFnvBasis;  // every C element's bits, row-major
    double sum = 0;               // of C's elements, row-major
    std::uint64_t off_closed_form = 0;  // elements other than n*i*j
};

std::string describe(const Answer& a) {
    char text[200];
    std::snprintf(text, sizeof text, "work_items=%llu leaves=%llu c_hash=%016llx c_sum=%.17g off_closed_form=%llu",
                  static_cast<unsigned long long>(a.items), static_cast<unsigned long long>(a.leaves),
                  static_cast<unsigned long long>(a.hash), a.sum, static_cast<unsigned long long>(a.off_closed_form));
    return text;
}

// C's figures: its hash, its sum, and how many elements differ from Savina's closed form n*i*j
// (every product i*j and partial sum is an integer below 2^53, so exact in any order).
template <class At>
void fold_c(Answer& answer, std::uint32_t n, At&& at) {
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t j = 0; j < n; ++j) {
            const double value = at(i, j);
            answer.hash = savina::fnv_fold(answer.hash, std::bit_cast<std::uint64_t>(value));
            answer.sum += value;
            if (value != double(n) * double(i) * double(j)) ++answer.off_closed_form;
        }
}

// What a correct run answers: every item handed out and done, C as Savina's closed form.
std::string closed_form(const Setup& s) {
    Answer a;
    a.items = items_of(std::uint64_t(s.n) * s.n, s.threshold);
    a.leaves = leaves_of(std::uint64_t(s.n) * s.n, s.threshold);
    fold_c(a, s.n, [&](std::uint32_t i, std::uint32_t j) { return double(s.n) * double(i) * double(j); });
    return describe(a);
}

// Start (kernel -> master); Work (master -> worker, and a splitting worker -> master); Done
// (worker -> master, one per item).
struct Start {};
struct Done {
    bool leaf;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(Master& master, std::uint64_t threshold, Matrices& m, StartLatch& started)
        : master_(master), threshold_(threshold), m_(m), started_(started) {
        subscribe<&Worker::on_work>();
    }

private:
    void on_start() override { started_.count_down(); }
    void on_work(const Work& w);

    Master& master_;
    const std::uint64_t threshold_;
    Matrices& m_;
    StartLatch& started_;
};

class Master final : public rt::Agent {
public:
    Master(std::uint32_t n, rt::Completion<Answer>& done, StartLatch& started)
        : n_(n), done_(done), started_(started) {
        subscribe<&Master::on_start_message>();
        subscribe<&Master::on_work>();
        subscribe<&Master::on_done>();
    }
    void link(std::vector<Worker*> workers) { workers_ = std::move(workers); }

private:
    void on_start() override { started_.count_down(); }
    void on_start_message(const Start&) { send_work(whole(n_)); }
    void on_work(const Work& w) { send_work(w); }

    // As Savina's sendWork: the worker is chosen by where in C the item writes, so that the items
    // writing one block of C all go to one worker, one at a time.
    void send_work(const Work& w) {
        rt::send<Work>(*workers_[(w.sr_c + w.sc_c) % workers_.size()], w);
        ++sent_;
    }

    void on_done(const Done& d) {
        ++answer_.items;
        if (d.leaf) ++answer_.leaves;
        // A splitting worker sends its sub-items before its Done, so none is still to come.
        if (answer_.items == sent_) done_.set(answer_);
    }

    const std::uint32_t n_;
    rt::Completion<Answer>& done_;
    StartLatch& started_;
    std::vector<Worker*> workers_;
    std::uint64_t sent_ = 0;
    Answer answer_;
};

void Worker::on_work(const Work& w) {
    const bool leaf = w.num_blocks <= threshold_;
    if (leaf) multiply(w, m_.a.data(), m_.b.data(), m_.c.data(), m_.n);
    else split(w, [&](const Work& sub) { rt::send<Work>(master_, sub); });
    rt::send<Done>(master_, leaf);
}

Result run(const Params& params) {
    const Setup s = setup(params);
    Matrices m(s.n);  // input made before the phase, as Savina's initializeData

    StartLatch started(s.workers + 1);
    MeasuredRun<Answer> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();

    // Savina's clock also covers making the workers (in the master's start); ours makes them
    // before the phase and starts it at the master's first item.
    Master* master = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        master = &coop.make_agent_with_binder<Master>(dispatchers.binder(0), s.n, run.done(), started);
        std::vector<Worker*> workers;
        for (std::uint32_t i = 0; i < s.workers; ++i)
            workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(1 + i), *master, s.threshold, m, started));
        master->link(std::move(workers));
    });
    started.wait(env);

    Result result;
    Answer answer = run.measure(result, [&] { rt::send<Start>(*master); });

    // Every item: its Work to a worker, the Work that carried it to the master (all but the
    // first), its Done; and the Start.
    result.messages_processed = 3 * answer.items;
    fold_c(answer, s.n, [&](std::uint32_t i, std::uint32_t j) { return m.c[std::size_t(i) * s.n + j]; });
    result.answer = describe(answer);
    result.expected = savina::timed_sequential(result, [&] {
        Matrices sequential(s.n);
        multiply_recursively(whole(s.n), s.threshold, sequential);
        Answer a;
        a.items = items_of(std::uint64_t(s.n) * s.n, s.threshold);
        a.leaves = leaves_of(std::uint64_t(s.n) * s.n, s.threshold);
        fold_c(a, s.n, [&](std::uint32_t i, std::uint32_t j) { return sequential.c[std::size_t(i) * s.n + j]; });
        return describe(a);
    });
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    if (!std::has_single_bit(s.n))
        throw ParamError(kKernel, "data_length",
                         "parameter 'data_length' must be a power of two (each split halves the blocks); got " +
                             std::to_string(s.n));
    const std::uint64_t items = items_of(std::uint64_t(s.n) * s.n, s.threshold);
    if (items > kMaxWorkItems)
        throw ParamError(kKernel, "threshold",
                         "parameter 'threshold' is too small for data_length=" + std::to_string(s.n) + ": " +
                             std::to_string(items) + " work items, at most " + std::to_string(kMaxWorkItems) +
                             "; use a larger threshold");
    check_thread_per_agent(kKernel, params, std::uint64_t(s.workers) + 1, "workers=" + std::to_string(s.workers));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {closed_form(s), 3 * items_of(std::uint64_t(s.n) * s.n, s.threshold)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("data_length", 1024, {1, 4096},
                      "rows and columns of the square matrices A, B and C, a power of two (Savina's N, DATA_LENGTH)"),
        integer_param("threshold", 16'384, {1, 16'777'216},
                      "a work item of more elements than this (its block of C, dim*dim) is split into 8; "
                      "one of this many or fewer is multiplied (Savina's T, BLOCK_THRESHOLD)"),
        integer_param("workers", 20, {1, 100'000},
                      "worker agents the master hands work items to (Savina's W, NUM_WORKERS)"),
    };
}

const Registration registration(Kernel{
    .name = kKernel,
    .summary = "a master hands out the blocks of a recursive matrix product to `workers` workers, "
               "who split large blocks into eight and multiply small ones: coarse, uneven parallel work",
    .description =
        "Savina's benchmark 23, Recursive Matrix Multiplication (recmatmul). C = A x B for square "
        "matrices of data_length rows, with Savina's inputs A[i][j] = i and B[i][j] = j (made before "
        "the phase). A master sends the whole product as one work item to a worker; a worker given "
        "an item of more than `threshold` elements (its block of C, dim x dim) splits it into its "
        "8 half-size sub-products (Savina's split, in Savina's order) and sends them to the master, "
        "which hands each to worker (row + column of its block of C) mod `workers`, as Savina's "
        "master does, so that the items writing one block of C go to one worker; an item of "
        "`threshold` or fewer elements the worker multiplies into C with Savina's loop (for each "
        "element of the block, row by row, the products added in k order). Every item done is "
        "reported to the master (Done), which ends the run when every item it handed out is done. "
        "At the defaults (1,024, threshold 16,384 = 128 x 128, 20 workers): 585 items, 512 of them "
        "multiplied, 1,755 messages (per item its Work to a worker, its Done, and for all but the "
        "first the Work to the master; the first is sent on the kernel's Start). The phase runs "
        "from the Start to the master's last Done, the master and the workers made and started "
        "before it. The sequential program is the same split, depth first, with the same leaf "
        "multiplication, in one thread (its time is sequential_ns). The items that write one block "
        "of C arrive in an order the schedule decides, but with Savina's inputs every product and "
        "partial sum is an integer below 2^53, so C is exact in any order: C[i][j] = data_length * "
        "i * j, Savina's own check. Only the workers' blocks of C that (row + column) mod workers "
        "picks get work: at the defaults 5 of the 20 workers multiply (12 to 14 of the 64 blocks of "
        "C each). Differences from Savina: Savina's clock also covers making the workers (in the "
        "master's start) and its Stop messages (2 x workers); ours makes them before the phase and "
        "sends no Stop (the environment stops the agents after the phase); Savina's Done (and Stop) "
        "is one shared object (DoneMessage.ONLY), sent for every item, where each Done here makes "
        "its message; Savina's priorities "
        "(each sub-item one level higher, for its priority mailboxes) are left out, our runtime "
        "having no priority mailboxes (Savina's Akka version, which ignores them, is the one "
        "followed); Savina checks C against the closed form, ours also hashes every element's "
        "bits and sums C, both checked against the sequential program.",
    .sources = {{"savina", "23. Recursive Matrix Multiplication (recmatmul)"}},
    .verifies = "every work item handed out done, and C bit for bit the sequential program's (a hash of "
                "every element and their sum) and Savina's closed form data_length * i * j",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_recmatmul
