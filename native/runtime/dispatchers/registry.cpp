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
     .takes = {.threads = true, .fifo = true, .max_demands_at_once = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<ThreadPool>(params);
     }},
    {.name = "work_stealing",
     .help = "N threads, one queue each, idle threads steal",
     .takes = {.threads = true, .fifo = true, .max_demands_at_once = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<WorkStealing>(params);
     }},
    {.name = "adv_thread_pool",
     .help = "N threads, one shared queue; an agent's thread-safe handlers run in parallel",
     .takes = {.threads = true, .max_demands_at_once = true},
     .make = [](Environment& env, const DispatcherParams& params) -> Dispatcher& {
         return env.make_dispatcher<AdvThreadPool>(params);
     }},
    {.name = "active_obj",
     .help = "a thread per agent",
     .thread_per_agent = true,
     .make = [](Environment& env, const DispatcherParams&) -> Dispatcher& {
         return env.make_dispatcher<ActiveObj>();
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
