// Scripted programs: agents that pass messages along given routes, on any dispatcher, with every
// send and every delivery logged. Not a benchmark, and not in the product: the property tests
// (tests/test_program.py) generate random programs, run them through labctl._program (module.cpp
// here, built for the editable install only) and compare the logs with a sequential model of what
// must arrive. It stands on the kernels' framework (their dispatcher parameters), none of them.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "../../kernels/framework/kernel.hpp"

namespace labctl::testing {

// Targets are numbered agents first, then named mboxes: target t < agents.size() is agent t,
// target agents.size() + m is mbox m.
struct Program {
    struct AgentSpec {
        std::uint32_t coop = 0;   // agents with the same number share a coop (registered in order)
        std::uint32_t group = 0;  // the binder index (active_group's group)
    };
    std::vector<AgentSpec> agents;
    std::vector<std::vector<std::uint32_t>> subscribers;  // per named mbox: the agents on it
    // Per external sender thread, its messages in send order; each message is a route: the
    // sender sends it to route[0], whoever receives it at step s forwards it to route[s + 1].
    // Messages are numbered in this order: sender 0's first route is message 0.
    std::vector<std::vector<std::vector<std::uint32_t>>> senders;
    double timeout_s = 10;
};

struct ProgramLog {
    struct Delivery {
        std::uint32_t from;     // an agent, or agents.size() + external sender
        std::uint32_t channel;  // the receiver itself when sent directly, else the mbox's target
        std::uint32_t message;
        std::uint32_t step;
    };
    struct Send {
        std::uint32_t target;
        std::uint32_t message;
        std::uint32_t step;
    };
    std::vector<std::vector<Delivery>> received;  // per agent, in the order it handled them
    std::vector<std::vector<Send>> sent;          // per agent, then per external sender
    std::uint64_t dropped = 0;                    // messages the runtime dropped
};

// Runs the program on the dispatcher that `dispatcher_params` (the kernels' dispatcher
// parameters) describe. Throws ParamError for a malformed program or bad parameters, and
// std::runtime_error if the deliveries the routes imply have not all happened within timeout_s.
ProgramLog run_program(const Program& program, const std::map<std::string, kernels::Value>& dispatcher_params);

}  // namespace labctl::testing
