// Every dispatcher by name: what it does, which settings it takes, and how to make one. The one
// table (registry.cpp) that the kernels' dispatcher parameters and the runtime tests read.
#pragma once

#include <span>
#include <string_view>

#include "dispatcher.hpp"

namespace labctl::rt {

// Which of DispatcherParams a dispatcher reads.
struct DispatcherTakes {
    bool threads = false;
    bool fifo = false;
    bool max_demands_at_once = false;
    bool wake = false;
    bool stack_kb = false;
};

struct DispatcherEntry {
    std::string_view name;
    std::string_view help;  // how it maps agents to threads, in a few words
    DispatcherTakes takes = {};
    // It starts a thread per agent: fine for tens of agents, absurd for a million.
    bool thread_per_agent = false;
    // Its own default for max_demands_at_once, where it differs from the kernels' (SObjectizer's
    // 4, which thread_pool and adv_thread_pool reproduce); 0: none of its own.
    std::uint32_t own_max_demands_at_once = 0;
    // Makes one in `environment`, which owns it, from the settings in `takes`.
    Dispatcher& (*make)(Environment& environment, const DispatcherParams& params);
};

// In the order they are listed to users: one_thread first, active_obj (the one a kernel may
// refuse at its size) last.
std::span<const DispatcherEntry> dispatchers() noexcept;

// Throws std::invalid_argument naming the registered dispatchers.
const DispatcherEntry& find_dispatcher(std::string_view name);

}  // namespace labctl::rt
