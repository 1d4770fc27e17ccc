// Runs a kernel without Python, for profilers (perf, valgrind --tool=callgrind):
//   run_kernel NAME [param=value ...] [--repeat N]
// Prints one line per run: elapsed, messages processed, the answer, and the kernel's metrics.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "kernels/framework/kernel.hpp"

namespace k = labctl::kernels;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: run_kernel NAME [param=value ...] [--repeat N]\n");
        return 2;
    }
    std::map<std::string, k::Value> given;
    int repeat = 1;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = std::atoi(argv[++i]);
            continue;
        }
        const char* equals = std::strchr(argv[i], '=');
        if (equals == nullptr) {
            std::fprintf(stderr, "run_kernel: expected param=value, got '%s'\n", argv[i]);
            return 2;
        }
        given[std::string(argv[i], std::size_t(equals - argv[i]))] = std::string(equals + 1);
    }
    try {
        const k::Kernel& kernel = k::find_kernel(argv[1]);
        const k::Params params = k::resolve(kernel, given);
        for (int r = 0; r < repeat; ++r) {
            const k::Result result = k::run(kernel, params);
            std::printf("%s: %.3f ms, %llu messages, %.2f M msgs/s, %s", kernel.name.c_str(),
                        double(result.elapsed_ns) / 1e6, static_cast<unsigned long long>(result.messages_processed),
                        double(result.messages_processed) * 1e3 / double(result.elapsed_ns), result.answer.c_str());
            for (const k::Metric& metric : result.metrics) std::printf(", %s=%g", metric.name.c_str(), metric.value);
            std::printf("\n");
        }
    } catch (const k::ParamError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 2;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "run_kernel: %s\n", error.what());
        return 1;
    }
    return 0;
}
