// The actor system of a CAF kernel's run: its scheduler from the parameters, its threads' CPU
// clocks, and its actors' failures.
#include "run.hpp"

#include <pthread.h>

#include <string>

namespace labctl::kernels::caf_support {

namespace {

std::int64_t read_ns(clockid_t clock) {
    timespec now{};
    if (clock_gettime(clock, &now) != 0) return 0;
    return std::int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Registers each thread the actor system starts, from that thread.
class ClockHook final : public caf::thread_hook {
public:
    explicit ClockHook(ThreadClocks* clocks) : clocks_(clocks) {}
    void init(caf::actor_system&) override {}
    void thread_started() override { clocks_->started(); }
    void thread_terminates() override { clocks_->terminates(); }

private:
    ThreadClocks* clocks_;
};

}  // namespace

std::vector<ParamSpec> scheduler_params() {
    std::vector<ParamSpec> specs{
        integer_param("threads", 2, {1, 1024}, "CAF scheduler worker threads (scheduler.max-threads)"),
        {.name = "policy",
         .type = ParamType::choice,
         .default_value = std::string("stealing"),
         .help = "CAF scheduler policy (scheduler.policy): stealing (a queue per worker, idle "
                 "workers steal) or sharing (one shared queue)",
         .choices = {std::string("stealing"), std::string("sharing")}},
    };
    for (ParamSpec& spec : specs) spec.configuration = true;
    return specs;
}

void ThreadClocks::started() {
    clockid_t clock{};
    const bool have_clock = pthread_getcpuclockid(pthread_self(), &clock) == 0;
    std::lock_guard lock(mutex_);
    threads_.push_back({std::this_thread::get_id(), clock, have_clock, 0});
}

void ThreadClocks::terminates() {
    // Read before the thread is gone: its clock id is invalid afterwards.
    const std::int64_t now = read_ns(CLOCK_THREAD_CPUTIME_ID);
    const std::thread::id self = std::this_thread::get_id();
    std::lock_guard lock(mutex_);
    for (Thread& thread : threads_) {
        if (thread.id == self && thread.running) {
            thread.running = false;
            thread.last_ns = now;
        }
    }
}

std::vector<std::int64_t> ThreadClocks::cpu_ns() const {
    std::lock_guard lock(mutex_);
    std::vector<std::int64_t> result;
    result.reserve(threads_.size());
    // Under the lock: a thread cannot end (and its clock become invalid) while it is read.
    for (const Thread& thread : threads_) result.push_back(thread.running ? read_ns(thread.clock) : thread.last_ns);
    return result;
}

CafRun::CafRun(const Params& params, std::function<void()> abandon)
    : abandon_(std::move(abandon)), clocks_(std::make_unique<ThreadClocks>()) {
    const auto threads = params.integer("threads");
    config_.set("scheduler.max-threads", threads);
    config_.set("scheduler.policy", params.text("policy") == "sharing" ? caf::atom("sharing") : caf::atom("stealing"));
    config_.add_thread_hook<ClockHook>(clocks_.get());
    system_ = std::make_unique<caf::actor_system>(config_);
    // The parameter must reach the scheduler: a key CAF did not take would leave its default.
    if (system_->scheduler().num_workers() != std::size_t(threads))
        throw std::logic_error("CAF started " + std::to_string(system_->scheduler().num_workers()) +
                               " scheduler threads, not " + std::to_string(threads));
}

CafRun::~CafRun() {
    // Here on the way out of a failed run: the kept actors are told to exit (a detached one's
    // thread would otherwise keep the system from shutting down), and the others are not waited
    // for, since an actor stuck waiting for a message that will not come would never end.
    exit_kept();
    bool failed;
    {
        std::lock_guard lock(failure_mutex_);
        failed = failure_ != nullptr;
    }
    system_->await_actors_before_shutdown(!failed);
    system_.reset();
    // Every thread of the system has ended and left its last reading.
    if (thread_lives_ != nullptr) *thread_lives_ = clocks_->cpu_ns();
}

void CafRun::watch(caf::scheduled_actor& actor) {
    actor.set_exception_handler([this](caf::scheduled_actor*, std::exception_ptr& error) -> caf::error {
        fail(error);
        return caf::sec::runtime_error;
    });
    actor.set_default_handler([this](caf::scheduled_actor*, caf::message_view& message) -> caf::result<caf::message> {
        fail(std::make_exception_ptr(
            std::logic_error("an actor received a message it has no handler for: " + caf::to_string(message.content()))));
        return caf::sec::unexpected_message;
    });
}

void CafRun::fail(std::exception_ptr error) {
    {
        std::lock_guard lock(failure_mutex_);
        if (failure_ == nullptr) failure_ = error;
    }
    abandon_();
}

void CafRun::rethrow_failure() {
    std::exception_ptr error;
    {
        std::lock_guard lock(failure_mutex_);
        error = failure_;
    }
    if (error) std::rethrow_exception(error);
}

void CafRun::exit_kept() {
    for (const caf::actor& actor : kept_) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    kept_.clear();
}

void CafRun::stop() {
    exit_kept();
    system_->await_all_actors_done();
    rethrow_failure();
}

void CafPhase::finish(Result& result, Clock::time_point end) const {
    counters::end();
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start_).count();
    result.thread_cpu_ns = run_.thread_cpu_ns();
    // Threads started during the phase were at zero when it began.
    for (std::size_t i = 0; i < cpu_at_start_.size() && i < result.thread_cpu_ns.size(); ++i)
        result.thread_cpu_ns[i] -= cpu_at_start_[i];
    result.process_cpu_ns = counters::process_cpu_ns();
    counters::record();
}

}  // namespace labctl::kernels::caf_support
