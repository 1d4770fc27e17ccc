// Named mbox subscriptions: changed a coop at a time under the exclusive lock.
#include "mbox.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>

namespace labctl::rt {
namespace {
bool by_type_queue(const NamedMbox::Subscriber& a, const NamedMbox::Subscriber& b) {
    return std::tie(a.type, a.queue, a.agent) < std::tie(b.type, b.queue, b.agent);
}
}  // namespace

void NamedMbox::subscribe(const std::vector<Subscriber>& added) {
    std::vector<Subscriber> sorted = added;
    std::sort(sorted.begin(), sorted.end(), by_type_queue);
    std::lock_guard lock(lock_);
    const auto middle = subscribers_.insert(subscribers_.end(), sorted.begin(), sorted.end());
    std::inplace_merge(subscribers_.begin(), middle, subscribers_.end(), by_type_queue);
}

void NamedMbox::unsubscribe(const std::vector<Subscriber>& removed) {
    std::vector<Subscriber> sorted = removed;
    std::sort(sorted.begin(), sorted.end(), by_type_queue);
    std::lock_guard lock(lock_);
    std::erase_if(subscribers_, [&](const Subscriber& s) {
        return std::binary_search(sorted.begin(), sorted.end(), s, by_type_queue);
    });
}

}  // namespace labctl::rt
