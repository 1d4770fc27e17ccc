// Which CPU each runtime thread runs on: pin = none | compact | spread | a list of cores.
// Always inside the CPU set the process inherited (taskset, cgroups): core 0 of a list is the
// first CPU the process may use, not CPU 0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace labctl::rt {

// The CPUs this process may run on (OS numbers, ascending).
std::vector<int> allowed_cpus();

// Pins the calling thread to one CPU; returns false if the system refused.
bool pin_current_thread(int cpu) noexcept;

// Lets the calling thread run on any of `cpus` (OS numbers) and no other; none: leaves it as it
// is. Returns false if the system refused.
bool confine_current_thread(const std::vector<int>& cpus) noexcept;

class Placement {
public:
    Placement() = default;  // none: threads float

    // Parses `none`, `compact` (SMT siblings and neighbouring cores first), `spread` (one CPU
    // per physical core first, then their siblings) or a core list such as `0,2-3` (indices
    // into allowed_cpus()). Throws std::invalid_argument whose message names what is allowed.
    static Placement parse(std::string_view spec);

    // The OS CPU for the runtime's `thread_index`-th thread, or -1 to leave it unpinned.
    // Threads beyond the list wrap around it.
    int cpu_for(unsigned thread_index) const noexcept {
        return cpus_.empty() ? -1 : cpus_[thread_index % cpus_.size()];
    }

    const std::string& spec() const noexcept { return spec_; }

private:
    std::string spec_ = "none";
    std::vector<int> cpus_;  // the order threads are pinned in; empty for none
};

}  // namespace labctl::rt
