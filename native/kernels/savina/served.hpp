// What Savina's 8 and 9 (savina_concdict, savina_concsll, and their CAF ports) share: workers
// each send one server a series of requests, one outstanding at a time, and tell a master when
// they are done; the master, once all are, tells the server to end. The master's messages and
// its count of ends.
#pragma once

#include <cstdint>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina {

// Master -> worker: start your requests.
struct DoWork {};
// Worker -> master: done, with the replies it counted.
struct EndWork {
    std::uint64_t replies;
};
// Master -> server: every worker is done, with the replies they counted.
struct End {
    std::uint64_t replies;
};

// The master's side, on any runtime: true once every worker has ended (then End goes to the
// server with the replies they counted).
class Ends {
public:
    explicit Ends(std::uint64_t workers) noexcept : workers_(workers) {}
    bool ended(const EndWork& end) noexcept {
        replies_ += end.replies;
        return ++ended_ == workers_;
    }
    End end() const noexcept { return {replies_}; }

private:
    const std::uint64_t workers_;
    std::uint64_t ended_ = 0;
    std::uint64_t replies_ = 0;
};

// The messages of a run: DoWork per worker, a request and a reply per operation, EndWork per
// worker, End.
template <class Sizes>
std::uint64_t served_messages(const Sizes& sizes) noexcept {
    return 2 * std::uint64_t(sizes.workers) * (sizes.messages_per_worker + 1) + 1;
}

// A run's figures, once the server has handled the end, and what a run must answer: the kernel's
// replay(sizes) and describe(outcome), found beside its Sizes and Outcome.
template <class Sizes, class Outcome>
void served_report(Result& result, const Outcome& outcome, const Sizes& sizes) {
    result.messages_processed = served_messages(sizes);
    result.answer = describe(outcome);
    result.expected = describe(replay(sizes));
}

template <class Sizes>
Expectation served_expect(const Params& params) {
    const Sizes sizes(params);
    return {describe(replay(sizes)), served_messages(sizes)};
}

}  // namespace labctl::kernels::savina
