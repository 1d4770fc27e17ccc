// Reading the inherited CPU set and the machine's topology, and pinning threads.
#include "affinity.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

namespace labctl::rt {
namespace {

struct CpuTopology {
    int cpu;
    int package;
    int core;
};

// C stdio, not iostreams: in an extension loaded after numpy's bundled libraries, formatted
// ifstream input crashed on GCC 13 / glibc 2.39 (seen with pin=compact on a 16-core machine).
int read_topology_value(int cpu, const char* name) {
    const std::string path = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + name;
    int value = -1;
    if (std::FILE* file = std::fopen(path.c_str(), "r")) {
        const int read = std::fscanf(file, "%d", &value);
        std::fclose(file);
        if (read == 1) return value;
    }
    return cpu;  // unknown topology: treat every CPU as its own core and package
}

std::vector<CpuTopology> topology(const std::vector<int>& cpus) {
    std::vector<CpuTopology> result;
    for (int cpu : cpus)
        result.push_back({cpu, read_topology_value(cpu, "physical_package_id"),
                          read_topology_value(cpu, "core_id")});
    return result;
}

std::string describe_allowed(const std::vector<int>& cpus) {
    std::string text = std::to_string(cpus.size()) + " CPU" + (cpus.size() == 1 ? "" : "s") +
                       " (cores 0-" + std::to_string(cpus.size() - 1) + " = OS CPUs ";
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        if (i) text += ',';
        text += std::to_string(cpus[i]);
    }
    return text + ")";
}

[[noreturn]] void refuse(const std::string& what, const std::vector<int>& cpus) {
    throw std::invalid_argument(what + "; this process may use " + describe_allowed(cpus) +
                                "; allowed: none, compact, spread, or a list of cores such as "
                                "0,1 or 0-" + std::to_string(cpus.size() - 1));
}

int parse_core(std::string_view text, std::string_view spec, const std::vector<int>& cpus) {
    int value = -1;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || text.empty())
        refuse("'" + std::string(spec) + "' is not a core list", cpus);
    if (value < 0 || std::size_t(value) >= cpus.size())
        refuse("core " + std::to_string(value) + " is outside the allowed set", cpus);
    return value;
}

}  // namespace

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

bool pin_current_thread(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

bool confine_current_thread(const std::vector<int>& cpus) noexcept {
    if (cpus.empty()) return true;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

Placement Placement::parse(std::string_view spec) {
    Placement placement;
    placement.spec_ = std::string(spec);
    if (spec == "none") return placement;
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.empty()) throw std::invalid_argument("cannot read this process's CPU set");

    if (spec == "compact" || spec == "spread") {
        std::vector<CpuTopology> topo = topology(cpus);
        if (spec == "compact") {
            // Neighbours first: SMT siblings of a core, then the next core, package by package.
            std::sort(topo.begin(), topo.end(), [](const CpuTopology& a, const CpuTopology& b) {
                return std::tie(a.package, a.core, a.cpu) < std::tie(b.package, b.core, b.cpu);
            });
        } else {
            // As far apart as possible: the n-th sibling of every core before any (n+1)-th,
            // alternating packages.
            std::map<std::pair<int, int>, int> seen;     // (package, core) -> siblings so far
            std::map<int, int> cores_in_package;          // package -> cores so far
            std::map<std::pair<int, int>, int> core_rank; // (package, core) -> rank in package
            std::vector<std::tuple<int, int, int, int>> keyed;  // sibling, core rank, package, cpu
            std::sort(topo.begin(), topo.end(), [](const CpuTopology& a, const CpuTopology& b) {
                return std::tie(a.package, a.core, a.cpu) < std::tie(b.package, b.core, b.cpu);
            });
            for (const CpuTopology& t : topo) {
                auto key = std::make_pair(t.package, t.core);
                if (!core_rank.count(key)) core_rank[key] = cores_in_package[t.package]++;
                keyed.emplace_back(seen[key]++, core_rank[key], t.package, t.cpu);
            }
            std::sort(keyed.begin(), keyed.end());
            topo.clear();
            for (auto& [sibling, rank, package, cpu] : keyed) topo.push_back({cpu, package, rank});
        }
        for (const CpuTopology& t : topo) placement.cpus_.push_back(t.cpu);
        return placement;
    }

    // A core list: "0,2-3".
    std::size_t start = 0;
    while (start <= spec.size()) {
        std::size_t comma = spec.find(',', start);
        if (comma == std::string_view::npos) comma = spec.size();
        std::string_view item = spec.substr(start, comma - start);
        std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            placement.cpus_.push_back(cpus[parse_core(item, spec, cpus)]);
        } else {
            int first = parse_core(item.substr(0, dash), spec, cpus);
            int last = parse_core(item.substr(dash + 1), spec, cpus);
            if (last < first) refuse("range '" + std::string(item) + "' is empty", cpus);
            for (int core = first; core <= last; ++core) placement.cpus_.push_back(cpus[core]);
        }
        start = comma + 1;
    }
    return placement;
}

}  // namespace labctl::rt
