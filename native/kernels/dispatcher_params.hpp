// The dispatcher parameters every kernel shares (dispatcher, threads, fifo,
// max_demands_at_once, spin_us, pin), declared once, and the dispatcher they describe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/runtime.hpp"
#include "kernel.hpp"

namespace labctl::kernels {

// Defaults a kernel may change to match its study (self_send's study runs an individual-FIFO
// pool). The default dispatcher is the first one a kernel accepts.
struct PoolDefaults {
    std::int64_t threads = 2;
    std::string fifo = "cooperation";
    std::int64_t max_demands_at_once = 4;
};

// The schema of the dispatcher parameters, for a kernel that accepts `dispatchers`.
std::vector<ParamSpec> dispatcher_params(const std::vector<std::string>& dispatchers,
                                         const PoolDefaults& defaults = {});

// active_obj starts a thread per agent: fine for tens of agents, absurd for a million. A kernel
// that would put more than this many agents on it refuses the parameters.
inline constexpr std::uint64_t kMaxActiveObjAgents = 10'000;

// Throws ParamError if `dispatcher` is active_obj and `agents` exceeds kMaxActiveObjAgents;
// `cause` names the parameters that make the agents ("leaves=1000000").
void check_thread_per_agent(const std::string& kernel, const Params& params, std::uint64_t agents,
                            const std::string& cause);

// The environment and dispatcher a kernel's parameters ask for.
class DispatcherChoice {
public:
    explicit DispatcherChoice(const Params& params);

    rt::Environment& environment() noexcept { return *environment_; }
    const std::string& kind() const noexcept { return kind_; }
    // Where to bind the index-th agent (or group of agents): active_group spreads indices over
    // its `threads` groups; every other dispatcher ignores the index.
    rt::Binder binder(unsigned index = 0) const noexcept {
        return dispatcher_->binder(index % groups_);
    }

private:
    std::string kind_;
    unsigned groups_ = 1;  // active_group's `threads`; 1 for the others
    std::unique_ptr<rt::Environment> environment_;
    rt::Dispatcher* dispatcher_ = nullptr;
};

}  // namespace labctl::kernels
