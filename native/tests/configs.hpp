// The dispatcher configurations every runtime test runs through, read from the dispatcher
// registry (a new dispatcher is tested with no edit here), and the leak check.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "runtime/runtime.hpp"

namespace rt = labctl::rt;
using namespace std::chrono_literals;

// A dispatcher configuration under test.
struct Config {
    std::string name;
    const rt::DispatcherEntry* dispatcher;
    rt::DispatcherParams params;
    std::chrono::nanoseconds spin = 20us;

    rt::Dispatcher& make(rt::Environment& environment) const { return dispatcher->make(environment, params); }
};

// Every dispatcher with its defaults; with each setting it takes at the other end (a thread more,
// a queue per agent, one demand per turn, woken queues to the shared FIFO); with threads that
// park at once (the wake-up paths) taking long turns; and SObjectizer's scheduling (wake=fifo)
// with a coop's shared queue and threads that park at once. A variant that changes nothing a
// dispatcher takes is left out.
inline std::vector<Config> configs() {
    struct Variant {
        rt::DispatcherParams params;
        std::chrono::nanoseconds spin;
    };
    const Variant variants[] = {
        {{}, 20us},
        {{.threads = 3, .fifo = rt::Fifo::individual, .max_demands_at_once = 1, .wake = rt::Wake::fifo}, 20us},
        {{.threads = 2, .fifo = rt::Fifo::individual, .max_demands_at_once = 100}, 0ns},
        {{.threads = 2, .fifo = rt::Fifo::cooperation, .wake = rt::Wake::fifo}, 0ns},
    };
    std::vector<Config> result;
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        const rt::DispatcherTakes& takes = dispatcher.takes;
        std::vector<std::string> seen;
        for (const Variant& variant : variants) {
            std::string name(dispatcher.name);
            if (takes.threads) name += " threads=" + std::to_string(variant.params.threads);
            if (takes.fifo) name += variant.params.fifo == rt::Fifo::individual ? " individual" : " cooperation";
            if (takes.max_demands_at_once) name += " x" + std::to_string(variant.params.max_demands_at_once);
            if (takes.wake) name += variant.params.wake == rt::Wake::fifo ? " wake=fifo" : " wake=lifo";
            if (variant.spin == 0ns) name += " spin=0";
            if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
            seen.push_back(name);
            result.push_back({name, &dispatcher, variant.params, variant.spin});
        }
    }
    return result;
}

inline std::unique_ptr<rt::Environment> make_environment(const Config& config) {
    rt::EnvironmentConfig env_config;
    env_config.spin = config.spin;
    return std::make_unique<rt::Environment>(env_config);
}

// Every block the pool handed out has come back: no envelope, agent or coop leaked.
inline void check_no_leak() {
    CHECK_EQ(rt::pool::stats().blocks_out, std::size_t{0});
    CHECK(rt::pool::release());
}
