// Declaring and interpreting the shared dispatcher parameters.
#include "dispatcher_params.hpp"

#include <chrono>

namespace labctl::kernels {

std::vector<ParamSpec> dispatcher_params(const std::vector<std::string>& dispatchers,
                                         const PoolDefaults& defaults) {
    std::vector<Value> choices(dispatchers.begin(), dispatchers.end());
    return {
        {.name = "dispatcher",
         .type = ParamType::choice,
         .default_value = dispatchers.front(),
         .help = "how agents map to threads: one_thread (one thread for all), active_obj (a "
                 "thread per agent), active_group (a thread per group), thread_pool (N threads, "
                 "one shared queue of ready agents), work_stealing (N threads, one queue each, "
                 "idle threads steal)",
         .choices = choices},
        {.name = "threads",
         .type = ParamType::integer,
         .default_value = defaults.threads,
         .help = "groups of active_group, or threads of thread_pool and work_stealing",
         .minimum = 1,
         .maximum = 1024,
         .applies_to = {"active_group", "thread_pool", "work_stealing"}},
        {.name = "fifo",
         .type = ParamType::choice,
         .default_value = defaults.fifo,
         .help = "cooperation: a coop's agents share one queue (never run in parallel); "
                 "individual: a queue per agent",
         .choices = {std::string("cooperation"), std::string("individual")},
         .applies_to = {"thread_pool", "work_stealing"}},
        {.name = "max_demands_at_once",
         .type = ParamType::integer,
         .default_value = defaults.max_demands_at_once,
         .help = "demands a pool thread runs from one queue before it moves to the next",
         .minimum = 1,
         .maximum = 1'000'000'000,
         .applies_to = {"thread_pool", "work_stealing"}},
        {.name = "spin_us",
         .type = ParamType::real,
         .default_value = 20.0,
         .help = "microseconds an idle thread spins before it parks (0: park at once)",
         .minimum = 0,
         .maximum = 1'000'000},
        {.name = "pin",
         .type = ParamType::text,
         .default_value = std::string("none"),
         .help = "pin runtime threads: none, compact, spread, or cores of the inherited CPU set "
                 "(0,1 or 0-3; core 0 is the first CPU this process may use)",
         .validate = [](const Value& value) { rt::Placement::parse(std::get<std::string>(value)); }},
    };
}

void check_thread_per_agent(const std::string& kernel, const Params& params, std::uint64_t agents,
                            const std::string& cause) {
    if (params.text("dispatcher") != "active_obj" || agents <= kMaxActiveObjAgents) return;
    throw ParamError(kernel, "dispatcher",
                     "dispatcher 'active_obj' starts a thread per agent: " + cause + " needs " +
                         std::to_string(agents) + " threads (at most " +
                         std::to_string(kMaxActiveObjAgents) +
                         "); use a smaller size or one of: one_thread, active_group, thread_pool, "
                         "work_stealing");
}

DispatcherChoice::DispatcherChoice(const Params& params) : kind_(params.text("dispatcher")) {
    rt::EnvironmentConfig config;
    config.spin = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double, std::micro>(params.real("spin_us")));
    config.placement = rt::Placement::parse(params.text("pin"));
    environment_ = std::make_unique<rt::Environment>(std::move(config));
    const unsigned threads = params.has("threads") ? unsigned(params.integer("threads")) : 1;
    if (kind_ == "active_group") groups_ = threads;

    rt::Environment& env = *environment_;
    if (kind_ == "one_thread") {
        dispatcher_ = &env.make_dispatcher<rt::OneThread>();
    } else if (kind_ == "active_obj") {
        dispatcher_ = &env.make_dispatcher<rt::ActiveObj>();
    } else if (kind_ == "active_group") {
        dispatcher_ = &env.make_dispatcher<rt::ActiveGroup>();
    } else {
        rt::PoolParams pool;
        pool.threads = threads;
        pool.fifo = params.text("fifo") == "individual" ? rt::Fifo::individual : rt::Fifo::cooperation;
        pool.max_demands_at_once = std::uint32_t(params.integer("max_demands_at_once"));
        if (kind_ == "thread_pool") dispatcher_ = &env.make_dispatcher<rt::ThreadPool>(pool);
        else dispatcher_ = &env.make_dispatcher<rt::WorkStealing>(pool);
    }
}

}  // namespace labctl::kernels
