// The dispatcher table. A constant: it is complete before any static constructor runs, so the
// kernels, which register themselves from theirs, can read it then.
#include "registry.hpp"

#include <stdexcept>
#include <string>

#include "../environment.hpp"
#include "active_group.hpp"
#include "active_obj.hpp"
#include "adv_thread_pool.hpp"
#include "one_thread.hpp"
#include "thread_pool.hpp"
#include "work_stealing.hpp"

namespace labctl::rt {
namespace {

constexpr DispatcherEntry kDispatchers[] = {
    {.name = "one_thread",
     .help = "one thread for all",
     .make = [](Environment& env, const DispatcherParams&) -> Dispatcher& {
         return env.make_dispatcher<OneThread>();
     }},
    {.name = "active_group",
     .help = "a thread per group, N groups",
     .takes = {.threads = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<ActiveGroup>(params.threads);
     }},
    {.name = "thread_pool",
     .help = "N threads, one shared queue of ready agents",
     .takes = {.threads = true, .fifo = true, .max_demands_at_once = true, .wake = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<ThreadPool>(params);
     }},
    {.name = "work_stealing",
     .help = "N threads, one queue each, idle threads steal",
     .takes = {.threads = true, .fifo = true, .max_demands_at_once = true},
     // Ours, not SObjectizer's: a budget that runs a skynet coop's ten start demands in one turn.
     // At 4 a coop's queue went back to the stealable FIFO after four of them, behind the
     // children its handlers had just woken, and was cold (or stolen) by its next turn: skynet
     // 1M on 2 threads 100 ms against 42 ms at 16, 1 thread 101 against 73. The classic kernels
     // on 2 threads ran as fast or faster at 16 (self_send individual 67 -> 111 M msgs/s,
     // counting_actor 38 -> 47-53) but mailbox_n_to_1 with cooperation FIFO (51 -> 47).
     // Both budgets measured in one session, two interleaved rounds (issue 22's note).
     .own_max_demands_at_once = 16,
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<WorkStealing>(params);
     }},
    {.name = "adv_thread_pool",
     .help = "N threads, one shared queue; an agent's thread-safe handlers run in parallel",
     .takes = {.threads = true, .max_demands_at_once = true, .wake = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<AdvThreadPool>(params);
     }},
    {.name = "active_obj",
     .help = "a thread per agent",
     .takes = {.stack_kb = true},
     .thread_per_agent = true,
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<ActiveObj>(std::size_t{params.stack_kb} * 1024);
     }},
};

}  // namespace

std::span<const DispatcherEntry> dispatchers() noexcept { return kDispatchers; }

const DispatcherEntry& find_dispatcher(std::string_view name) {
    for (const DispatcherEntry& entry : kDispatchers)
        if (entry.name == name) return entry;
    std::string names;
    for (const DispatcherEntry& entry : kDispatchers)
        names += (names.empty() ? "" : ", ") + std::string(entry.name);
    throw std::invalid_argument("unknown dispatcher '" + std::string(name) + "' (dispatchers: " +
                                names + ")");
}

}  // namespace labctl::rt
