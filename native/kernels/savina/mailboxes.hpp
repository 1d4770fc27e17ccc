// The dispatcher parameters of every savina_ kernel: ours (framework/dispatcher_params.hpp) with
// fifo = individual by default, a queue per agent, as every Savina actor has a mailbox of its own.
// fifo = cooperation (a queue per coop, SObjectizer's default, ours) stays a choice: on a pool it
// runs a coop's agents one at a time, on one thread, whatever `threads` says.
#pragma once

#include <vector>

#include "../framework/dispatcher_params.hpp"

namespace labctl::kernels::savina {

inline std::vector<ParamSpec> dispatcher_params() {
    return kernels::dispatcher_params({.defaults = {.fifo = rt::Fifo::individual}});
}

}  // namespace labctl::kernels::savina
