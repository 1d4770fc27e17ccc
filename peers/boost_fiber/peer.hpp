// What the Boost.Fiber peer's kernels share: the request's parameters, the reply, the scheduler
// that maps our `dispatcher` onto Boost.Fiber's algorithms, and the way a wrong answer or bad
// input ends.
#pragma once

#include <barrier>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/fiber/all.hpp>

namespace peer {

using Clock = std::chrono::steady_clock;

// Boost.Fiber's three scheduling algorithms, each the faithful image of one of our dispatchers:
// round_robin (one_thread: one thread, one queue), shared_work (thread_pool: `threads` threads,
// one queue of ready fibers they all take from) and work_stealing (work_stealing: a queue per
// thread, an idle thread steals).
enum class Algorithm { round_robin, shared_work, work_stealing };

// The request's parameters, validated against the kernel's table (main.cpp): its integers, and
// how its fibers are scheduled (`threads` is 1 for round_robin).
struct Params {
    std::map<std::string, std::int64_t> integers;
    Algorithm algorithm = Algorithm::round_robin;
    unsigned threads = 1;

    std::int64_t at(const std::string& name) const { return integers.at(name); }
};

// The one JSON line printed on stdout. A metric not measured is left out, never 0.
struct Reply {
    std::int64_t elapsed_ns = 0;
    std::uint64_t messages = 0;
    std::string answer;
    std::vector<std::pair<std::string, double>> metrics;
    std::uint64_t agents_created = 0;  // the fibers its phase made, where it counts them (0: left out)
};

// Bad input: one line on stderr, nothing on stdout, exit 2.
[[noreturn]] void fail(const std::string& message);

// A wrong answer is no timing: one line on stderr naming both answers, exit 1.
[[noreturn]] void wrong_answer(const std::string& kernel, const std::string& got, const std::string& expected);

// Fault injection for tests/test_peer_boost_fiber.py only (LABCTL_BOOST_FIBER_FAULT):
// compute: the kernel computes a wrong answer, which its own check must catch (exit 1);
// reply: the kernel reports a wrong answer after its check passed, which labctl must catch.
enum class Fault { none, compute, reply };
Fault fault();

// The fiber scheduler: `params.algorithm` on `params.threads` threads, this thread and
// threads-1 more, alive from construction to destruction. round_robin and work_stealing are the
// Boost.Fiber performance page's two columns (one thread; every thread); shared_work is the
// library's other multi-threaded skynet (its performance/fiber/skynet_shared_detach.cpp). The
// two multi-threaded ones keep the library's default suspend = false: an idle thread spins
// looking for work, it never sleeps. Fibers are launched only once every thread has registered
// with the algorithm (a thief picks any thread's queue; the shared queue is served by all).
class Scheduler {
public:
    explicit Scheduler(const Params& params);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

private:
    void work(Algorithm algorithm, unsigned threads);

    std::barrier<> registered_;  // every thread has registered: fibers may start
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    boost::fibers::condition_variable_any stop_;
    bool done_ = false;
};

Reply skynet(const Params& params);
Reply ping_pong(const Params& params);
Reply thread_ring(const Params& params);

}  // namespace peer
