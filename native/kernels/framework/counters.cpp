// The measured phase's marks for callgrind (client requests) and the perf_event counters.
#include "counters.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

// CMakeLists.txt defines LABCTL_CALLGRIND=1 for this file where valgrind/callgrind.h is found.
#ifndef LABCTL_CALLGRIND
#define LABCTL_CALLGRIND 0
#endif
#if LABCTL_CALLGRIND
#include <valgrind/callgrind.h>
#endif

namespace labctl::kernels::counters {
namespace {

// Whether a phase is being counted: begin() sets it, the first end() clears it. end() may run
// on a runtime thread (Completion::set) and again on the kernel's thread (finish): the exchange
// lets exactly one of them stop the counting.
std::atomic<bool> counting{false};
std::atomic<bool> ended{false};  // end() ran, record() has not yet
std::atomic<const Session*> open_session{nullptr};

// The process's CPU time over the last phase: begin() reads the clock before the phase's work
// starts and end() after it, in order (the phase's messages order them); the kernel's thread
// reads the result after end(), ordered by the Completion it waited for, or being end()'s caller.
std::int64_t process_cpu_at_begin = 0;
std::int64_t process_cpu_in_phase = 0;

std::int64_t cpu_ns(clockid_t clock) noexcept {
    timespec now{};
    clock_gettime(clock, &now);
    return std::int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

struct Spec {
    const char* name;
    std::uint32_t type;
    std::uint64_t config;
    // Counted by the kernel on the process's behalf (a switch, a migration): it cannot be
    // counted from user space alone.
    bool in_kernel_only;
};

// In Reading order. The hardware counters count user space only, as callgrind does (and as
// perf_event_paranoid=2 allows every user); the software ones count in the kernel where allowed.
constexpr Spec kSpecs[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false},
    {"cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false},
    {"branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false},
    {"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true},
    {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true},
    {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
};

std::string paranoid() {
    std::ifstream file("/proc/sys/kernel/perf_event_paranoid");
    std::string value;
    return file >> value ? value : "?";
}

int open_counter(const Spec& spec, bool exclude_kernel) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = spec.type;
    attr.config = spec.config;
    attr.disabled = 1;  // begin() enables it
    attr.inherit = 1;   // threads started later count too (read() sums them, running or ended)
    attr.exclude_kernel = exclude_kernel ? 1 : 0;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return int(syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string why_not(int error) {
    const std::string call = std::string("perf_event_open: ") + std::strerror(error);
    switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        return "this CPU (or virtual machine) does not expose it (" + call + ")";
    case EACCES:
    case EPERM:
        return "perf_event_paranoid=" + paranoid() + " forbids it to this user (" + call + ")";
    case ENOSYS:
        return "this kernel has no perf_event_open";
    default:
        return call;
    }
}

}  // namespace

// The tools' own work (callgrind discarding its translations, writing a dump) stays outside the
// process's CPU time of the phase, and out of the runtime threads' (record()).
void begin() noexcept {
    process_cpu_in_phase = 0;
    counting.store(true, std::memory_order_release);
#if LABCTL_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
#endif
    process_cpu_at_begin = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (const Session* session = open_session.load(std::memory_order_acquire)) session->enable();
}

void end() noexcept {
    if (!counting.exchange(false, std::memory_order_acq_rel)) return;
    if (const Session* session = open_session.load(std::memory_order_acquire)) session->disable();
    process_cpu_in_phase = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - process_cpu_at_begin;
#if LABCTL_CALLGRIND
    CALLGRIND_DUMP_STATS_AT("labctl measured phase");
#endif
    ended.store(true, std::memory_order_release);
}

void record() noexcept {
    if (!ended.exchange(false, std::memory_order_acq_rel)) return;
#if LABCTL_CALLGRIND
    // Every thread's counts (callgrind keeps one set without --separate-threads), collected
    // between the marks; nothing was collected since end() stopped the instrumentation.
    CALLGRIND_STOP_INSTRUMENTATION;
#endif
}

std::int64_t process_cpu_ns() noexcept { return process_cpu_in_phase; }

bool under_valgrind() noexcept {
#if LABCTL_CALLGRIND
    return RUNNING_ON_VALGRIND != 0;
#else
    return false;
#endif
}

std::string callgrind_missing() {
    return LABCTL_CALLGRIND ? "" : "labctl was built without valgrind's headers (valgrind/callgrind.h): "
                                   "install valgrind, then reinstall labctl";
}

Session::Session() {
    for (const Spec& spec : kSpecs) {
        Counter counter{.name = spec.name, .fd = -1, .unsupported = {}};
        counter.fd = open_counter(spec, spec.type == PERF_TYPE_HARDWARE);
        if (counter.fd < 0 && (errno == EACCES || errno == EPERM) && spec.type == PERF_TYPE_SOFTWARE) {
            if (spec.in_kernel_only) {
                counter.unsupported = "counted in the kernel, which perf_event_paranoid=" + paranoid() +
                                      " hides from this user";
            } else {
                counter.fd = open_counter(spec, true);
            }
        }
        if (counter.fd < 0 && counter.unsupported.empty()) counter.unsupported = why_not(errno);
        counters_.push_back(std::move(counter));
    }
    const Session* none = nullptr;
    if (!open_session.compare_exchange_strong(none, this, std::memory_order_acq_rel)) {
        for (Counter& counter : counters_)
            if (counter.fd >= 0) close(counter.fd);
        throw std::logic_error("a counters::Session is already open");
    }
}

Session::~Session() {
    open_session.store(nullptr, std::memory_order_release);
    for (Counter& counter : counters_)
        if (counter.fd >= 0) close(counter.fd);
}

void Session::enable() const noexcept {
    for (const Counter& counter : counters_) {
        if (counter.fd < 0) continue;
        // On the session's counter, these apply to the counters its threads inherited too.
        ioctl(counter.fd, PERF_EVENT_IOC_RESET, 0);
        ioctl(counter.fd, PERF_EVENT_IOC_ENABLE, 0);
    }
}

void Session::disable() const noexcept {
    for (const Counter& counter : counters_)
        if (counter.fd >= 0) ioctl(counter.fd, PERF_EVENT_IOC_DISABLE, 0);
}

std::vector<Reading> Session::read() const {
    std::vector<Reading> readings;
    for (const Counter& counter : counters_) {
        Reading reading{counter.name, std::nullopt, counter.unsupported};
        std::uint64_t values[3] = {};  // value, time enabled, time running
        if (counter.fd >= 0) {
            if (::read(counter.fd, values, sizeof values) != ssize_t(sizeof values)) {
                reading.unsupported = std::string("reading it failed: ") + std::strerror(errno);
            } else if (values[1] > 0 && values[2] == 0) {
                reading.unsupported = "enabled but never counted: the CPU had no free counter for it";
            } else if (values[2] < values[1]) {
                // Multiplexed with other counters: scaled to the time it was enabled.
                reading.value = std::int64_t(double(values[0]) * double(values[1]) / double(values[2]));
            } else {
                reading.value = std::int64_t(values[0]);
            }
        }
        readings.push_back(std::move(reading));
    }
    return readings;
}

}  // namespace labctl::kernels::counters
