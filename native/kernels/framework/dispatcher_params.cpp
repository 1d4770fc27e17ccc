// Declaring the shared dispatcher parameters from the dispatcher registry, and interpreting them.
#include "dispatcher_params.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace labctl::kernels {
namespace {

// The values of `fifo`.
constexpr std::pair<rt::Fifo, std::string_view> kFifos[] = {
    {rt::Fifo::cooperation, "cooperation"},
    {rt::Fifo::individual, "individual"},
};

std::string fifo_name(rt::Fifo fifo) {
    for (const auto& [value, name] : kFifos)
        if (value == fifo) return std::string(name);
    throw std::logic_error("a fifo without a name");
}

rt::Fifo parse_fifo(std::string_view text) {
    for (const auto& [value, name] : kFifos)
        if (name == text) return value;
    throw std::logic_error("fifo outside its schema");
}

// The values of `wake`.
constexpr std::pair<rt::Wake, std::string_view> kWakes[] = {
    {rt::Wake::lifo, "lifo"},
    {rt::Wake::fifo, "fifo"},
};

std::string wake_name(rt::Wake wake) {
    for (const auto& [value, name] : kWakes)
        if (value == wake) return std::string(name);
    throw std::logic_error("a wake without a name");
}

rt::Wake parse_wake(std::string_view text) {
    for (const auto& [value, name] : kWakes)
        if (name == text) return value;
    throw std::logic_error("wake outside its schema");
}

// The listed dispatchers' own defaults of a setting (where they have one: not 0).
std::vector<std::pair<std::string, Value>> own_defaults(const std::vector<const rt::DispatcherEntry*>& listed,
                                                        std::uint32_t rt::DispatcherEntry::*setting) {
    std::vector<std::pair<std::string, Value>> defaults;
    for (const rt::DispatcherEntry* entry : listed)
        if (entry->*setting != 0) defaults.emplace_back(std::string(entry->name), std::int64_t{entry->*setting});
    return defaults;
}

}  // namespace

std::vector<ParamSpec> dispatcher_params(const DispatcherUse& use) {
    // A default that is not registered fails here, when the kernel registers, not when it runs.
    std::vector<const rt::DispatcherEntry*> listed;
    if (!use.dispatcher.empty()) listed.push_back(&rt::find_dispatcher(use.dispatcher));
    for (const rt::DispatcherEntry& entry : rt::dispatchers())
        if (entry.name != use.dispatcher) listed.push_back(&entry);
    if (listed.empty()) throw std::logic_error("no dispatcher is registered");

    std::vector<Value> choices;
    std::string help = "how agents map to threads:";
    for (const rt::DispatcherEntry* entry : listed) {
        choices.emplace_back(std::string(entry->name));
        help += std::string(choices.size() == 1 ? " " : ", ") + std::string(entry->name) + " (" +
                std::string(entry->help) + ")";
    }
    // The listed dispatchers whose entries take a setting: where its parameter applies.
    auto taking = [&](bool rt::DispatcherTakes::*setting) {
        std::vector<std::string> names;
        for (const rt::DispatcherEntry* entry : listed)
            if (entry->takes.*setting) names.emplace_back(entry->name);
        return names;
    };
    ParamSpec settings[] = {
        {.name = "threads",
         .type = ParamType::integer,
         .default_value = std::int64_t{use.defaults.threads},
         .help = "N: the dispatcher's threads (see `dispatcher`)",
         .minimum = 1,
         .maximum = 1024,
         .applies_to = taking(&rt::DispatcherTakes::threads)},
        {.name = "fifo",
         .type = ParamType::choice,
         .default_value = fifo_name(use.defaults.fifo),
         .help = "cooperation: a coop's agents share one queue (never run in parallel); "
                 "individual: a queue per agent",
         .choices = {fifo_name(rt::Fifo::cooperation), fifo_name(rt::Fifo::individual)},
         .applies_to = taking(&rt::DispatcherTakes::fifo)},
        {.name = "max_demands_at_once",
         .type = ParamType::integer,
         .default_value = std::int64_t{use.defaults.max_demands_at_once},
         .help = "demands a pool thread runs from one queue before it moves to the next",
         .minimum = 1,
         .maximum = 1'000'000'000,
         .applies_to = taking(&rt::DispatcherTakes::max_demands_at_once),
         .default_for = own_defaults(listed, &rt::DispatcherEntry::own_max_demands_at_once)},
        {.name = "wake",
         .type = ParamType::choice,
         .default_value = wake_name(use.defaults.wake),
         .help = "where a queue woken by a pool thread's send waits: lifo: it runs next on that "
                 "thread (ours: ping-pong between two individual-FIFO agents stays on one "
                 "thread); fifo: at the back of the shared FIFO, for whichever thread looks "
                 "first (SObjectizer's thread_pool, what its studies measured: that ping-pong "
                 "crosses threads when another thread takes it)",
         .choices = {wake_name(rt::Wake::lifo), wake_name(rt::Wake::fifo)},
         .applies_to = taking(&rt::DispatcherTakes::wake)},
        {.name = "stack_kb",
         .type = ParamType::integer,
         .default_value = std::int64_t{use.defaults.stack_kb},
         .help = "KiB of stack for each agent's thread: 0 takes the system's default (8 MiB of "
                 "address space a thread here); else at least PTHREAD_STACK_MIN (" +
                 std::to_string(rt::Thread::min_stack_bytes() / 1024) +
                 " here). Smaller stacks let more threads start: " +
                 std::to_string(kMaxAgentThreads) + " at the default, up to " +
                 std::to_string(kMaxSmallStackThreads) + " with small ones",
         .minimum = 0,
         .maximum = 1 << 20,
         .applies_to = taking(&rt::DispatcherTakes::stack_kb),
         .validate = [](const Value& value) {
             const auto kb = std::get<std::int64_t>(value);
             const auto min_kb = std::int64_t(rt::Thread::min_stack_bytes() / 1024);
             if (kb != 0 && kb < min_kb)
                 throw std::invalid_argument("parameter 'stack_kb' must be 0 (the system's default) or at "
                                             "least " + std::to_string(min_kb) +
                                             " (PTHREAD_STACK_MIN on this system), got " + std::to_string(kb));
         }},
    };
    std::vector<ParamSpec> specs{{.name = "dispatcher",
                                  .type = ParamType::choice,
                                  .default_value = choices.front(),
                                  .help = help,
                                  .choices = choices}};
    // A setting that no listed dispatcher takes is left out (an empty applies_to means "all").
    for (ParamSpec& spec : settings)
        if (!spec.applies_to.empty()) specs.push_back(std::move(spec));
    specs.push_back(real_param("spin_us", 20.0, {0, 1'000'000},
                               "microseconds an idle thread spins before it parks (0: park at once)"));
    specs.push_back({.name = "pin",
                     .type = ParamType::text,
                     .default_value = std::string("none"),
                     .help = "pin runtime threads: none, compact, spread, or cores of the inherited CPU set "
                             "(0,1 or 0-3; core 0 is the first CPU this process may use)",
                     .validate = [](const Value& value) {
                         rt::Placement::parse(std::get<std::string>(value));
                     }});
    for (ParamSpec& spec : specs) spec.configuration = true;
    return specs;
}

std::uint64_t max_agent_threads(const Params& params) {
    const std::int64_t stack_kb = params.has("stack_kb") ? params.integer("stack_kb") : 0;
    if (stack_kb == 0 || stack_kb * 1024 >= std::int64_t{kDefaultStackBytes}) return kMaxAgentThreads;
    // As much address space as kMaxAgentThreads default stacks, in smaller ones.
    const std::uint64_t fit = kMaxAgentThreads * kDefaultStackBytes / (std::uint64_t(stack_kb) * 1024);
    return std::min(fit, kMaxSmallStackThreads);
}

void check_thread_per_agent(const std::string& kernel, const Params& params, std::uint64_t agents,
                            const std::string& cause) {
    const std::string& dispatcher = params.text("dispatcher");
    const std::uint64_t limit = max_agent_threads(params);
    if (!rt::find_dispatcher(dispatcher).thread_per_agent || agents <= limit) return;
    std::string others;
    for (const rt::DispatcherEntry& entry : rt::dispatchers())
        if (!entry.thread_per_agent) others += (others.empty() ? "" : ", ") + std::string(entry.name);
    // Where smaller stacks would let more threads start, say so.
    const std::string smaller_stacks =
        params.has("stack_kb") && limit < kMaxSmallStackThreads
            ? " with stack_kb=" + std::to_string(params.integer("stack_kb")) + "; a smaller stack_kb allows up to " +
                  std::to_string(kMaxSmallStackThreads)
            : "";
    throw ParamError(kernel, "dispatcher",
                     "dispatcher '" + dispatcher + "' starts a thread per agent: " + cause + " needs " +
                         std::to_string(agents) + " threads (at most " + std::to_string(limit) + smaller_stacks +
                         "); use a smaller size or one of: " + others);
}

DispatcherChoice::DispatcherChoice(const Params& params) {
    rt::EnvironmentConfig config;
    config.spin = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double, std::micro>(params.real("spin_us")));
    config.placement = rt::Placement::parse(params.text("pin"));
    environment_ = std::make_unique<rt::Environment>(std::move(config));
    // Resolution kept the settings that apply to this dispatcher: those its entry takes.
    rt::DispatcherParams settings;
    if (params.has("threads")) settings.threads = unsigned(params.integer("threads"));
    if (params.has("fifo")) settings.fifo = parse_fifo(params.text("fifo"));
    if (params.has("max_demands_at_once"))
        settings.max_demands_at_once = std::uint32_t(params.integer("max_demands_at_once"));
    if (params.has("wake")) settings.wake = parse_wake(params.text("wake"));
    if (params.has("stack_kb")) settings.stack_kb = std::uint32_t(params.integer("stack_kb"));
    dispatcher_ = &rt::find_dispatcher(params.text("dispatcher")).make(*environment_, settings);
}

std::vector<int> DispatcherChoice::runtime_cpus() const {
    std::vector<int> cpus;
    const rt::Placement& placement = environment_->placement();
    for (unsigned i = 0; i < unsigned(environment_->thread_count()); ++i) {
        const int cpu = placement.cpu_for(i);
        if (cpu < 0) return {};
        if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
    }
    return cpus;
}

}  // namespace labctl::kernels
