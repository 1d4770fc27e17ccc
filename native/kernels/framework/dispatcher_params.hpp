// The dispatcher parameters every kernel shares (dispatcher, threads, fifo,
// max_demands_at_once, wake, spin_us, pin), derived from the runtime's dispatcher registry, and the
// dispatcher they describe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../../runtime/runtime.hpp"
#include "kernel.hpp"

namespace labctl::kernels {

// A kernel's dispatcher defaults: every registered dispatcher is listed in the registry's order,
// with `dispatcher`, its default, first (none: the registry's first); the settings' defaults as
// its study has them (self_send's study runs an individual-FIFO pool).
struct DispatcherUse {
    std::string_view dispatcher = {};
    rt::DispatcherParams defaults = {};
};

// The schema of the dispatcher parameters: `dispatcher`'s choices and help, and which
// dispatchers threads, fifo, max_demands_at_once and wake apply to, come from the registry.
std::vector<ParamSpec> dispatcher_params(const DispatcherUse& use = {});

// A dispatcher that starts a thread per agent (active_obj) is fine for tens of agents, absurd
// for a million: a kernel that would start more threads than this on one refuses the parameters.
// With its default stacks: 10,000 threads reserve 80 GiB of address space (8 MiB each).
inline constexpr std::uint64_t kMaxAgentThreads = 10'000;
inline constexpr std::uint64_t kDefaultStackBytes = std::uint64_t{8} << 20;
// With smaller stacks (stack_kb), as many as fit the same address space, up to this: each thread
// takes two memory maps (its stack and its guard page) of the kernel's default vm.max_map_count,
// 65,530, which the heap needs too.
inline constexpr std::uint64_t kMaxSmallStackThreads = 30'000;

// The most threads a thread-per-agent dispatcher may start with these parameters (stack_kb).
std::uint64_t max_agent_threads(const Params& params);

// Throws ParamError if `dispatcher` starts a thread per agent and `agents` exceeds
// max_agent_threads(); `cause` names the parameters that make the agents ("leaves=1000000").
void check_thread_per_agent(const std::string& kernel, const Params& params, std::uint64_t agents,
                            const std::string& cause);

// The environment and dispatcher a kernel's parameters ask for.
class DispatcherChoice {
public:
    explicit DispatcherChoice(const Params& params);

    rt::Environment& environment() noexcept { return *environment_; }
    // Stops and destroys the environment now (its destructor stops it), rather than when this
    // goes out of scope: the end of a clock that covers the environment's life.
    void destroy() noexcept { environment_.reset(); }
    // Where to bind the index-th agent (or group of agents): active_group spreads indices over
    // its `threads` groups; every other dispatcher ignores the index.
    rt::Binder binder(unsigned index = 0) const noexcept { return dispatcher_->binder(index); }
    // The CPUs the runtime's threads started so far are pinned to (pin), each once, in the order
    // of the threads; empty when they float (pin=none). Where a kernel's own threads (the
    // studies' sender threads) share the cores with the runtime, as on the study's machine.
    std::vector<int> runtime_cpus() const;

private:
    std::unique_ptr<rt::Environment> environment_;
    rt::Dispatcher* dispatcher_ = nullptr;
};

}  // namespace labctl::kernels
