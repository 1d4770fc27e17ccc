// The dispatcher parameters every kernel shares (dispatcher, threads, fifo,
// max_demands_at_once, spin_us, pin), declared once, and the dispatcher they describe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../runtime/runtime.hpp"
#include "kernel.hpp"

namespace labctl::kernels {

// The schema of the dispatcher parameters, for a kernel that accepts `dispatchers`.
std::vector<ParamSpec> dispatcher_params(const std::vector<std::string>& dispatchers);

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
