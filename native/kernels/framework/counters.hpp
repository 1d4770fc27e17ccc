// Counting what a measured phase executes, beside its wall time, with tools that do not read the
// clock (labctl's `instructions` and `counters` measures). MeasuredPhase (phase.hpp) marks the
// phase's two edges here; a kernel whose clock starts or stops inside a handler (ping_pong's
// throughput phase) marks them again there, where it reads its clock:
// - under valgrind's callgrind (started with --instr-atstart=no) the marks are client requests,
//   so callgrind counts the phase alone, every thread of the process, and dumps its counts after
//   the phase's end; outside valgrind a client request is a few instructions that do nothing;
// - while a Session is open, they enable and disable its perf_event counters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace labctl::kernels::counters {

// The phase starts: counting starts from zero (again, if it had started: the later edge wins).
void begin() noexcept;

// The phase ends: counting stops. Called where the phase's clock stops, which may be a runtime
// thread (a Completion the phase ends at); only the first call after begin() does anything.
void end() noexcept;

// After end(), on the kernel's thread once the phase's CPU times are read: callgrind writes the
// phase's counts to its next dump file (callgrind.out.N for the N-th phase of the process), work
// no thread of the phase pays for.
void record() noexcept;

// The CPU time every thread of the process used from begin() to end() of the last phase: the
// runtime's threads, and threads outside the runtime that take part (the kernel's own, which
// sends in counting_actor; sender threads; CAF's).
std::int64_t process_cpu_ns() noexcept;

// Whether this process runs under valgrind, and whether labctl was built with valgrind's client
// requests (valgrind/callgrind.h): why the phase cannot be marked for callgrind, empty if it can.
bool under_valgrind() noexcept;
std::string callgrind_missing();

// One counter of a Session over the phase: its value, or why this machine has none (never 0 for
// a counter that does not exist).
struct Reading {
    std::string name;
    std::optional<std::int64_t> value;
    std::string unsupported;  // empty when there is a value
};

// perf_event counters of the thread that opens the session and of every thread it starts while
// it is open (a kernel's runtime threads inherit them when they are created, so open it before
// the kernel runs): cycles, instructions, cache misses and branch misses of user space, and the
// kernel's task clock, context switches, CPU migrations and page faults. They count between
// begin() and end() only. One session at a time.
class Session {
public:
    Session();
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Every counter, in a fixed order; read it after the phase.
    std::vector<Reading> read() const;

    // Called by begin() and end() on the open session.
    void enable() const noexcept;
    void disable() const noexcept;

private:
    struct Counter {
        std::string name;
        int fd = -1;
        std::string unsupported;
    };
    std::vector<Counter> counters_;
};

}  // namespace labctl::kernels::counters
