// A minimal test harness for the runtime's C++ tests: registration, checks, a time limit per
// test (a hang fails the run instead of stalling CI) and a closing "N passed, M failed" line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace harness {

struct Test {
    std::string name;
    std::function<void()> body;
    std::chrono::seconds limit;
};

inline std::vector<Test>& tests() {
    static std::vector<Test> all;
    return all;
}

struct Registrar {
    Registrar(std::string name, std::function<void()> body, std::chrono::seconds limit) {
        tests().push_back({std::move(name), std::move(body), limit});
    }
};

struct Failure {
    std::string message;
};

[[noreturn]] inline void fail(const char* file, int line, const std::string& message) {
    std::ostringstream out;
    out << file << ":" << line << ": " << message;
    throw Failure{out.str()};
}

// Runs the tests whose names contain `filter` (all if empty); returns the process exit code.
inline int run_all(std::string_view filter) {
    int passed = 0, failed = 0;
    for (const Test& test : tests()) {
        if (!filter.empty() && test.name.find(filter) == std::string::npos) continue;
        std::mutex mutex;
        std::condition_variable done_changed;
        bool done = false;
        std::thread watchdog([&] {
            std::unique_lock lock(mutex);
            if (!done_changed.wait_for(lock, test.limit, [&] { return done; })) {
                std::printf("FAIL %s: did not finish within %llds\n", test.name.c_str(),
                            static_cast<long long>(test.limit.count()));
                std::printf("%d passed, %d failed\n", passed, failed + 1);
                std::fflush(stdout);
                std::_Exit(1);
            }
        });
        const auto start = std::chrono::steady_clock::now();
        std::string error;
        try {
            test.body();
        } catch (const Failure& failure) {
            error = failure.message;
        } catch (const std::exception& e) {
            error = std::string("exception: ") + e.what();
        }
        {
            std::lock_guard lock(mutex);
            done = true;
        }
        done_changed.notify_all();
        watchdog.join();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start).count();
        if (error.empty()) {
            ++passed;
            std::printf("ok   %s (%lld ms)\n", test.name.c_str(), static_cast<long long>(ms));
        } else {
            ++failed;
            std::printf("FAIL %s: %s\n", test.name.c_str(), error.c_str());
        }
        std::fflush(stdout);
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace harness

#define HARNESS_CONCAT2(a, b) a##b
#define HARNESS_CONCAT(a, b) HARNESS_CONCAT2(a, b)

// TEST(name, limit_seconds) { body }
#define TEST(name, limit_seconds)                                                        \
    static void name();                                                                  \
    static const harness::Registrar HARNESS_CONCAT(registrar_, name)(                    \
        #name, name, std::chrono::seconds(limit_seconds));                               \
    static void name()

#define CHECK(condition)                                                                 \
    do {                                                                                 \
        if (!(condition)) harness::fail(__FILE__, __LINE__, "CHECK(" #condition ") failed"); \
    } while (0)

#define CHECK_EQ(actual, expected)                                                       \
    do {                                                                                 \
        const auto& a_ = (actual);                                                       \
        const auto& e_ = (expected);                                                     \
        if (!(a_ == e_)) {                                                               \
            std::ostringstream out_;                                                     \
            out_ << #actual " == " #expected ": got " << a_ << ", expected " << e_;      \
            harness::fail(__FILE__, __LINE__, out_.str());                               \
        }                                                                                \
    } while (0)
