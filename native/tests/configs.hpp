// The dispatcher configurations every runtime test runs through, and the leak check.
#pragma once

#include <chrono>
#include <functional>
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
    std::function<rt::Dispatcher&(rt::Environment&)> make;
    std::chrono::nanoseconds spin = 20us;
};

inline std::vector<Config> configs() {
    return {
        {"one_thread", [](rt::Environment& env) -> rt::Dispatcher& { return env.make_dispatcher<rt::OneThread>(); }},
        {"one_thread spin=0", [](rt::Environment& env) -> rt::Dispatcher& { return env.make_dispatcher<rt::OneThread>(); }, 0ns},
        {"active_obj", [](rt::Environment& env) -> rt::Dispatcher& { return env.make_dispatcher<rt::ActiveObj>(); }},
        {"active_group", [](rt::Environment& env) -> rt::Dispatcher& { return env.make_dispatcher<rt::ActiveGroup>(); }},
        {"thread_pool cooperation", [](rt::Environment& env) -> rt::Dispatcher& {
             return env.make_dispatcher<rt::ThreadPool>(rt::PoolParams{2, rt::Fifo::cooperation, 4});
         }},
        {"thread_pool individual x1", [](rt::Environment& env) -> rt::Dispatcher& {
             return env.make_dispatcher<rt::ThreadPool>(rt::PoolParams{3, rt::Fifo::individual, 1});
         }},
        {"thread_pool individual spin=0", [](rt::Environment& env) -> rt::Dispatcher& {
             return env.make_dispatcher<rt::ThreadPool>(rt::PoolParams{2, rt::Fifo::individual, 100});
         }, 0ns},
        {"work_stealing individual", [](rt::Environment& env) -> rt::Dispatcher& {
             return env.make_dispatcher<rt::WorkStealing>(rt::PoolParams{3, rt::Fifo::individual, 4});
         }},
        {"work_stealing cooperation x1 spin=0", [](rt::Environment& env) -> rt::Dispatcher& {
             return env.make_dispatcher<rt::WorkStealing>(rt::PoolParams{2, rt::Fifo::cooperation, 1});
         }, 0ns},
    };
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
