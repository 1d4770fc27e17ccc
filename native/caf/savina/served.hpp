// What caf_savina_concdict and caf_savina_concsll share (kernels/savina/served.hpp's protocol on
// CAF): the workers, the master, which spawns them linked to it and starts each, and a run: the
// server and the master spawned inside the phase, until the server has handled the end.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "../../kernels/savina/served.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DoWork&) {
    return f(caf::meta::type_name("DoWork"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, EndWork& x) {
    return f(caf::meta::type_name("EndWork"), x.replies);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, End& x) {
    return f(caf::meta::type_name("End"), x.replies);
}

}  // namespace labctl::kernels::savina

namespace labctl::kernels::caf_support {

// A worker: on DoWork and on each reply it sends the server its next request, one outstanding at
// a time, and once all are made tells the master. `Protocol` is the kernel's: its Sizes, Client
// (the worker's side: replied(), next(operation), end()), Operation, Reply, and
// ask(self, server, operation), which sends the server the request.
template <class Protocol>
class ServedWorker final : public caf::event_based_actor {
public:
    ServedWorker(caf::actor_config& config, CafRun& run, const typename Protocol::Sizes& sizes, std::uint32_t id,
                 caf::actor server, caf::actor master)
        : caf::event_based_actor(config), client_(sizes, id), server_(std::move(server)), master_(std::move(master)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const savina::DoWork&) { step(); },
            [this](const typename Protocol::Reply&) {
                client_.replied();
                step();
            },
        };
    }

    // The master and its workers hold handles to each other: let go, or none is ever freed.
    void on_exit() override {
        server_ = nullptr;
        master_ = nullptr;
    }

private:
    void step() {
        typename Protocol::Operation op{};
        if (client_.next(op)) Protocol::ask(*this, server_, op);
        else send(master_, client_.end());
    }

    typename Protocol::Client client_;
    caf::actor server_;
    caf::actor master_;
};

// Savina's master: it spawns the workers, linked to it so that they end when the run's stop ends
// it, and starts each with a DoWork; once every worker has ended it tells the server to end.
template <class Protocol>
class ServedMaster final : public caf::event_based_actor {
public:
    using Sizes = typename Protocol::Sizes;
    using Worker = ServedWorker<Protocol>;

    ServedMaster(caf::actor_config& config, CafRun& run, const Sizes& sizes, caf::actor server)
        : caf::event_based_actor(config), run_(run), sizes_(sizes), server_(std::move(server)),
          ends_(sizes.workers) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        workers_.reserve(sizes_.workers);
        for (std::uint32_t i = 0; i < sizes_.workers; ++i)
            workers_.push_back(
                spawn<Worker, caf::linked>(std::ref(run_), std::cref(sizes_), i, server_, caf::actor(this)));
        for (const caf::actor& worker : workers_) send(worker, savina::DoWork{});
        return {[this](const savina::EndWork& end) {
            if (ends_.ended(end)) send(server_, ends_.end());
        }};
    }

    // The master and its workers hold handles to each other: let go, or none is ever freed.
    void on_exit() override {
        server_ = nullptr;
        workers_.clear();
    }

private:
    CafRun& run_;
    const Sizes& sizes_;
    caf::actor server_;
    savina::Ends ends_;
    std::vector<caf::actor> workers_;
};

// A run: the server (`Server(config, run, server_args..., done)`, which sets `done` with the
// outcome when it has handled the end) and the master spawned inside the phase (the actor system
// exists before it), ending at the server's outcome, into `result`'s phase.
template <class Server, class Protocol, class Outcome, class... ServerArgs>
Outcome run_served(const Params& params, Result& result, const typename Protocol::Sizes& sizes,
                   ServerArgs&&... server_args) {
    rt::Completion<Outcome> done;
    CafRun caf(params, done);
    CafPhase phase(caf);
    const caf::actor server = caf.system().spawn<Server>(std::ref(caf), std::forward<ServerArgs>(server_args)...,
                                                         std::ref(done));
    caf.keep<Server>(server);
    caf.keep<ServedMaster<Protocol>>(
        caf.system().spawn<ServedMaster<Protocol>>(std::ref(caf), std::cref(sizes), server));
    const Outcome outcome = caf.await(done);
    phase.finish(result, done.completed_at());
    caf.stop();
    return outcome;
}

}  // namespace labctl::kernels::caf_support
