// ping_pong on Boost.Fiber: a pinger fiber and a ponger fiber exchange messages/2 round trips
// over two buffered_channels of capacity 2 (one message each way at a time), the channel the
// library's own examples/ping_pong.cpp uses; each side checks the sequence numbers arrive in
// order. On thread_pool (shared_work) or work_stealing either fiber may run on any of the
// threads, taken from the shared queue or stolen, so the exchange may cross threads.
//
// As our kernel, in two phases: the throughput phase (elapsed_ns, no clock read inside), from the
// first ping to the last pong; then the latency phase times latency_samples more round trips one
// by one, for the percentiles. The scheduler's start and its threads' end are outside both.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "peer.hpp"

namespace peer {
namespace {

struct Message {
    std::uint64_t seq = 0;
};

using Channel = boost::fibers::buffered_channel<Message>;

// What one side received: how many, and how many out of order.
struct Tally {
    std::uint64_t received = 0;
    std::uint64_t out_of_order = 0;
};

std::string describe(const Tally& pings, const Tally& pongs) {
    return "pings=" + std::to_string(pings.received) + " pongs=" + std::to_string(pongs.received) +
           " out_of_order=" + std::to_string(pings.out_of_order + pongs.out_of_order) + " corrupt=0";
}

// The ponger answers each ping with a pong of the same seq (Fault::compute: the first pong's seq
// is off by one); the first round_trips pings are the throughput phase's, the rest the probes'.
void ponger(std::uint64_t round_trips, std::uint64_t probes, bool wrong_pong, Channel& ping, Channel& pong,
            Tally& pings, Tally& probe_pings) {
    for (std::uint64_t k = 0; k < round_trips; ++k) {
        const Message message = ping.value_pop();
        if (message.seq != k) ++pings.out_of_order;
        ++pings.received;
        pong.push(Message{message.seq + (wrong_pong && k == 0 ? 1 : 0)});
    }
    for (std::uint64_t k = 0; k < probes; ++k) {
        const Message message = ping.value_pop();
        if (message.seq != round_trips + k) ++probe_pings.out_of_order;
        ++probe_pings.received;
        pong.push(message);
    }
}

// What one steady_clock read costs here: each timed round trip includes about one.
double clock_read_ns() {
    constexpr int kReads = 1000;
    const Clock::time_point first = Clock::now();
    Clock::time_point last = first;
    for (int i = 0; i < kReads; ++i) last = Clock::now();
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(last - first).count()) / kReads;
}

struct Pinger {
    Tally pongs, probe_pongs;
    Clock::duration elapsed{};
    std::vector<std::int64_t> samples;
    double clock_read = 0;

    void run(std::uint64_t round_trips, std::uint64_t probes, Channel& ping, Channel& pong) {
        const Clock::time_point start = Clock::now();
        for (std::uint64_t k = 0; k < round_trips; ++k) {
            ping.push(Message{k});
            if (pong.value_pop().seq != k) ++pongs.out_of_order;
            ++pongs.received;
        }
        elapsed = Clock::now() - start;

        if (probes > 0) clock_read = clock_read_ns();
        samples.reserve(probes);
        for (std::uint64_t k = 0; k < probes; ++k) {
            const Clock::time_point sent = Clock::now();
            ping.push(Message{round_trips + k});
            const Message answer = pong.value_pop();
            samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count());
            if (answer.seq != round_trips + k) ++probe_pongs.out_of_order;
            ++probe_pongs.received;
        }
    }
};

// Our kernel's percentile: sorted[min(int(p*(n-1)+0.5), n-1)]; `sorted` is not empty.
double percentile(const std::vector<std::int64_t>& sorted, double p) {
    const auto rank = std::size_t(p * double(sorted.size() - 1) + 0.5);
    return double(sorted[std::min(rank, sorted.size() - 1)]);
}

}  // namespace

Reply ping_pong(const Params& params) {
    const auto round_trips = std::uint64_t(params.at("messages")) / 2;
    const auto probes = std::uint64_t(params.at("latency_samples"));
    const Fault injected = fault();

    Tally pings, probe_pings;
    Pinger pinger;
    {
        Scheduler scheduler(params);
        Channel ping{2}, pong{2};
        boost::fibers::fiber pong_fiber{ponger, round_trips, probes, injected == Fault::compute, std::ref(ping),
                                        std::ref(pong), std::ref(pings), std::ref(probe_pings)};
        boost::fibers::fiber ping_fiber{[&] { pinger.run(round_trips, probes, ping, pong); }};
        ping_fiber.join();
        pong_fiber.join();
    }

    const std::string answer = describe(pings, pinger.pongs);
    const std::string expected = describe(Tally{round_trips, 0}, Tally{round_trips, 0});
    if (answer != expected) wrong_answer("ping_pong", answer, expected);
    const std::string probed = describe(probe_pings, pinger.probe_pongs);
    if (probed != describe(Tally{probes, 0}, Tally{probes, 0}))
        wrong_answer("ping_pong (latency phase)", probed, describe(Tally{probes, 0}, Tally{probes, 0}));

    Reply reply;
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(pinger.elapsed).count();
    reply.elapsed_ns = std::max<std::int64_t>(1, elapsed);
    reply.messages = pings.received + pinger.pongs.received;
    reply.answer = injected == Fault::reply ? describe(pings, Tally{pinger.pongs.received - 1, 0}) : answer;
    std::vector<std::int64_t>& samples = pinger.samples;
    std::sort(samples.begin(), samples.end());
    reply.metrics.push_back({"round_trip_mean_ns", double(elapsed) / double(round_trips)});
    if (!samples.empty()) {
        reply.metrics.push_back({"round_trip_p50_ns", percentile(samples, 0.50)});
        reply.metrics.push_back({"round_trip_p99_ns", percentile(samples, 0.99)});
        reply.metrics.push_back({"round_trip_max_ns", double(samples.back())});
    }
    reply.metrics.push_back({"round_trip_samples", double(samples.size())});
    if (!samples.empty()) reply.metrics.push_back({"clock_read_ns", pinger.clock_read});
    return reply;
}

}  // namespace peer
