// Runs a scripted program (program.hpp) and logs what every agent sent and received.
#include "program.hpp"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "../../kernels/framework/dispatcher_params.hpp"

namespace labctl::testing {
namespace {

using kernels::DispatcherChoice;
using kernels::Kernel;
using kernels::ParamError;
using kernels::Value;

using Delivery = ProgramLog::Delivery;
using Send = ProgramLog::Send;

struct Hop {
    std::uint32_t from;
    std::uint32_t channel;
    std::uint32_t message;
    std::uint32_t step;
};

// What the agents share; written before the first message is sent, read-only after.
struct World {
    std::uint32_t agent_count = 0;
    std::vector<rt::Agent*> agents;
    std::vector<rt::NamedMbox*> mboxes;
    std::vector<const std::vector<std::uint32_t>*> routes;  // per message
    ProgramLog* log = nullptr;
    std::atomic<std::uint64_t> delivered{0};
};

// Sends message `message` at `step` of its route from `from`, and logs the send in `sent`.
void forward(World& world, std::uint32_t from, std::uint32_t message, std::uint32_t step,
             std::vector<Send>& sent) {
    const std::uint32_t target = (*world.routes[message])[step];
    sent.push_back({target, message, step});
    if (target < world.agent_count) {
        rt::send<Hop>(*world.agents[target], from, target, message, step);
    } else {
        rt::send<Hop>(*world.mboxes[target - world.agent_count], from, target, message, step);
    }
}

class Member final : public rt::Agent {
public:
    Member(World& world, std::uint32_t index, const std::vector<std::uint32_t>& mboxes)
        : world_(world), index_(index) {
        subscribe<&Member::on_hop>();
        for (std::uint32_t m : mboxes) subscribe<&Member::on_hop>(*world.mboxes[m]);
    }

private:
    void on_hop(const Hop& hop) {
        world_.log->received[index_].push_back({hop.from, hop.channel, hop.message, hop.step});
        if (hop.step + 1 < world_.routes[hop.message]->size())
            forward(world_, index_, hop.message, hop.step + 1, world_.log->sent[index_]);
        // release: the log entries above are visible to whoever reads the count (acquire).
        world_.delivered.fetch_add(1, std::memory_order_release);
    }

    World& world_;
    const std::uint32_t index_;
};

ParamError bad_program(const std::string& message) { return ParamError("program", "program", message); }

// How many deliveries a route implies from `step` on: an mbox delivers to each subscriber, and
// each of them forwards the rest of the route.
std::uint64_t deliveries(const Program& program, const std::vector<std::uint32_t>& route, std::size_t step) {
    if (step == route.size()) return 0;
    const std::uint32_t target = route[step];
    const std::uint64_t receivers =
        target < program.agents.size() ? 1 : program.subscribers[target - program.agents.size()].size();
    return receivers * (1 + deliveries(program, route, step + 1));
}

void check(const Program& program) {
    const std::size_t agents = program.agents.size(), targets = agents + program.subscribers.size();
    if (agents == 0) throw bad_program("a program needs at least one agent");
    for (const auto& subscribers : program.subscribers)
        for (std::uint32_t agent : subscribers)
            if (agent >= agents) throw bad_program("mbox subscriber " + std::to_string(agent) + " is not an agent");
    for (const auto& routes : program.senders)
        for (const auto& route : routes) {
            if (route.empty()) throw bad_program("a route must name at least one target");
            for (std::uint32_t target : route)
                if (target >= targets)
                    throw bad_program("route target " + std::to_string(target) + " is out of range (0.." +
                                      std::to_string(targets - 1) + ")");
        }
    if (!(program.timeout_s > 0)) throw bad_program("timeout_s must be positive");
}

const Kernel& program_schema() {
    static const Kernel schema = [] {
        Kernel kernel;
        kernel.name = "program";
        kernel.params = kernels::dispatcher_params();
        return kernel;
    }();
    return schema;
}

}  // namespace

ProgramLog run_program(const Program& program, const std::map<std::string, Value>& given) {
    check(program);
    DispatcherChoice choice(kernels::resolve(program_schema(), given));
    rt::Environment& env = choice.environment();

    const auto agent_count = std::uint32_t(program.agents.size());
    const auto sender_count = std::uint32_t(program.senders.size());
    ProgramLog log;
    log.received.resize(agent_count);
    log.sent.resize(agent_count + sender_count);
    World world;
    world.agent_count = agent_count;
    world.log = &log;
    std::uint64_t expected = 0;
    for (const auto& routes : program.senders)
        for (const auto& route : routes) {
            world.routes.push_back(&route);
            expected += deliveries(program, route, 0);
        }
    for (std::size_t m = 0; m < program.subscribers.size(); ++m)
        world.mboxes.push_back(&env.named_mbox("program-" + std::to_string(m)));
    std::vector<std::vector<std::uint32_t>> mboxes_of(agent_count);
    for (std::uint32_t m = 0; m < program.subscribers.size(); ++m)
        for (std::uint32_t agent : program.subscribers[m]) mboxes_of[agent].push_back(m);

    // Coops in increasing number, each holding its agents in index order.
    world.agents.resize(agent_count);
    std::map<std::uint32_t, std::vector<std::uint32_t>> coops;
    for (std::uint32_t a = 0; a < agent_count; ++a) coops[program.agents[a].coop].push_back(a);
    for (const auto& [number, members] : coops)
        env.introduce_coop(choice.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t a : members)
                world.agents[a] = &coop.make_agent_with_binder<Member>(choice.binder(program.agents[a].group),
                                                                      world, a, mboxes_of[a]);
        });

    // The external senders start together, once every agent exists.
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    std::uint32_t first_message = 0;
    for (std::uint32_t s = 0; s < sender_count; ++s) {
        threads.emplace_back([&, s, first_message] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            const auto count = std::uint32_t(program.senders[s].size());
            for (std::uint32_t i = 0; i < count; ++i) forward(world, agent_count + s, first_message + i, 0, log.sent[agent_count + s]);
        });
        first_message += std::uint32_t(program.senders[s].size());
    }
    go.store(true, std::memory_order_release);
    for (std::thread& thread : threads) thread.join();

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(program.timeout_s);
    while (world.delivered.load(std::memory_order_acquire) < expected && !env.failed() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    const std::uint64_t delivered = world.delivered.load(std::memory_order_acquire);
    env.stop();
    if (env.failed()) std::rethrow_exception(env.error());
    if (delivered != expected)
        throw std::runtime_error("program: " + std::to_string(delivered) + " of " + std::to_string(expected) +
                                 " deliveries after " + std::to_string(program.timeout_s) + " s");
    // Anything past the expected count arrived before stop() returned (it joined every thread).
    log.dropped = env.dropped();
    return log;
}

}  // namespace labctl::testing
