// The published studies labctl's kernels reproduce, each cited by its publication: the one home
// of their titles and addresses. A kernel names the studies it follows (Kernel::sources) and
// experiment files name them by key (`study = "theron_303"`); Python reads this table through
// the binding (labctl.studies).
#pragma once

#include <array>
#include <string_view>

namespace labctl::kernels {

struct Study {
    std::string_view key;        // how kernels and experiment files name it
    std::string_view title;
    std::string_view author;     // a person, or the site that published it
    std::string_view published;  // where: a blog, a site, a library's documentation
    int year;
    std::string_view url;        // its public address
};

inline constexpr std::array kStudies = {
    Study{"theron_303", "Theron performance (Theron 3.03)", "Ashton Mason",
          "theron-library.com", 2012, "http://www.theron-library.com/index.php?t=page&p=performance"},
    Study{"libcppa_mixed", "libcppa vs. Erlang vs. Scala Performance (Mixed Scenario)",
          "Dominik Charousset", "libcppa blog", 2012,
          "http://libcppa.blogspot.com/2012/02/libcppa-vs-erlang-vs-scala-performance.html"},
    Study{"libcppa_actor_creation", "Actor Creation Overhead", "Dominik Charousset",
          "libcppa blog", 2012,
          "http://libcppa.blogspot.com/2012/02/actor-creation-overhead.html"},
    Study{"libcppa_mailbox", "Mailbox Part 2", "Dominik Charousset", "libcppa blog", 2012,
          "http://libcppa.blogspot.com/2012/03/mailbox-part-2.html"},
    Study{"boost_fiber", "Boost.Fiber: Performance", "Oliver Kowalke",
          "Boost C++ Libraries documentation, Boost 1.82.0", 2023,
          "https://www.boost.org/doc/libs/1_82_0/libs/fiber/doc/html/fiber/performance.html"},
    Study{"sobjectizer_tales22", "SObjectizer Tales - 22. Performance, part 3", "Marco Arena",
          "DEV Community", 2024, "https://dev.to/ilpropheta/sobjectizer-tales-22-performance-part-3-24ng"},
    Study{"machinate_shootout", "Shootout 0001", "Kevin Downey",
          "the machinate repository (sourcehut), at 0.0.79-35-g7f85ba3", 2024,
          "https://git.sr.ht/~hiredman/machinate"},
    Study{"savina", "Savina - An Actor Benchmark Suite: Enabling Empirical Evaluation of Actor Libraries",
          "Shams M. Imam and Vivek Sarkar", "AGERE! 2014 (SPLASH workshops), ACM", 2014,
          "https://doi.org/10.1145/2687357.2687368"},
    Study{"run_actor_run", "Run, Actor, Run: Towards Cross-Actor Language Benchmarking",
          "Sebastian Blessing, Kiko Fernandez-Reyes, Albert Mingkun Yang, Sophia Drossopoulou and Tobias Wrigstad",
          "AGERE 2019 (SPLASH workshops), ACM", 2019, "https://doi.org/10.1145/3358499.3361224"},
    Study{"wrk2", "wrk2: a constant throughput, correct latency recording variant of wrk", "Gil Tene",
          "the wrk2 repository (GitHub), its README", 2014, "https://github.com/giltene/wrk2"},
};

// The study called `key`, or nullptr.
constexpr const Study* find_study(std::string_view key) noexcept {
    for (const Study& study : kStudies)
        if (study.key == key) return &study;
    return nullptr;
}

}  // namespace labctl::kernels
