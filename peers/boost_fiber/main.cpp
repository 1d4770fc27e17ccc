// labctl-boost-fiber-peer runs one labctl kernel (skynet, ping_pong or thread_ring) on Boost.Fiber
// and reports how long its measured phase took.
//
// Protocol (docs/runtimes.md): labctl writes one JSON request {"kernel": ..., "params": {...}}
// on stdin; the program runs the kernel once, checks its answer as our kernel does, and prints
// one JSON line {"elapsed_ns", "messages", "answer", "metrics"} on stdout, exit 0. Bad input:
// one line on stderr, nothing on stdout, exit 2. A wrong answer: one line on stderr, exit 1.

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <string>

#include "peer.hpp"

namespace peer {

void fail(const std::string& message) {
    std::fprintf(stderr, "labctl-boost-fiber-peer: %s\n", message.c_str());
    std::exit(2);
}

void wrong_answer(const std::string& kernel, const std::string& got, const std::string& expected) {
    std::fprintf(stderr, "labctl-boost-fiber-peer: %s: wrong answer: got '%s', expected '%s'\n", kernel.c_str(),
                 got.c_str(), expected.c_str());
    std::exit(1);
}

Fault fault() {
    const char* value = std::getenv("LABCTL_BOOST_FIBER_FAULT");
    if (value == nullptr || *value == '\0') return Fault::none;
    if (std::strcmp(value, "compute") == 0) return Fault::compute;
    if (std::strcmp(value, "reply") == 0) return Fault::reply;
    fail(std::string("LABCTL_BOOST_FIBER_FAULT must be compute or reply, got '") + value + "'");
}

namespace {

void use(Algorithm algorithm, unsigned threads) {
    switch (algorithm) {
        case Algorithm::round_robin:
            boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();
            return;
        case Algorithm::shared_work:
            boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
            return;
        case Algorithm::work_stealing:
            boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(threads);
            return;
    }
}

}  // namespace

Scheduler::Scheduler(const Params& params) : registered_(std::ptrdiff_t(params.threads)) {
    const Algorithm algorithm = params.algorithm;
    const unsigned threads = params.threads;
    for (unsigned i = 1; i < threads; ++i)
        workers_.emplace_back([this, algorithm, threads] { work(algorithm, threads); });
    use(algorithm, threads);
    registered_.arrive_and_wait();
}

// A worker thread: registers with the algorithm, then its main fiber waits for the end while the
// thread's dispatcher runs the kernel's fibers (stolen from another thread's queue, or taken from
// the shared one).
void Scheduler::work(Algorithm algorithm, unsigned threads) {
    use(algorithm, threads);
    registered_.arrive_and_wait();
    std::unique_lock<std::mutex> lock(mutex_);
    stop_.wait(lock, [this] { return done_; });
}

Scheduler::~Scheduler() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
    }
    stop_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

}  // namespace peer

namespace {

using peer::fail;

// An integer parameter: its default and allowed range, as our kernel's schema says.
struct Spec {
    std::int64_t default_value, minimum, maximum;
};

// A kernel's own integers; every kernel also takes `dispatcher` and `threads` (kDispatchers).
struct KernelEntry {
    const char* name;
    std::map<std::string, Spec> params;
    peer::Reply (*run)(const peer::Params&);
};

const KernelEntry kKernels[] = {
    {"skynet", {{"leaves", {1'000'000, 1, 100'000'000}}, {"branching", {10, 2, 1'000'000}}}, peer::skynet},
    {"ping_pong", {{"messages", {10'000'000, 2, 10'000'000'000}}, {"latency_samples", {10'000, 0, 10'000'000}}},
     peer::ping_pong},
    {"thread_ring", {{"actors", {503, 1, 10'000'000}}, {"hops", {50'000'000, 0, 100'000'000'000}}},
     peer::thread_ring},
};

// Our dispatchers this peer takes, our default first, each with its algorithm: peer.toml's
// [choices], which labctl enforces before the program runs (refused here too, for a request
// written by hand). `threads` applies to all but one_thread, as to ours: ours' default 2,
// range 1..1024.
struct DispatcherEntry {
    const char* name;
    peer::Algorithm algorithm;
    bool takes_threads;
};

const DispatcherEntry kDispatchers[] = {
    {"one_thread", peer::Algorithm::round_robin, false},
    {"thread_pool", peer::Algorithm::shared_work, true},
    {"work_stealing", peer::Algorithm::work_stealing, true},
};
const Spec kThreads{2, 1, 1024};

// A reader of the request: one JSON object {"kernel": string, "params": {name: integer or string}}.
class Reader {
public:
    explicit Reader(std::string text) : text_(std::move(text)) {}

    void expect(char c) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }

    bool next_is(char c) {
        skip_space();
        return pos_ < text_.size() && text_[pos_] == c;
    }

    std::string string() {
        expect('"');
        std::string out;
        while (pos_ < text_.size() && text_[pos_] != '"') {
            char c = text_[pos_++];
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c == '\\') {
                if (pos_ >= text_.size()) break;
                const char escaped = text_[pos_++];
                switch (escaped) {
                    case '"': case '\\': case '/': c = escaped; break;
                    case 'n': c = '\n'; break;
                    case 't': c = '\t'; break;
                    default: fail(std::string("unsupported escape \\") + escaped + " in a string");
                }
            }
            out += c;
        }
        expect('"');
        return out;
    }

    // An integer; anything else (a fraction, an exponent, a string, a boolean) is refused.
    std::int64_t integer(const std::string& name) {
        skip_space();
        const std::size_t start = pos_;
        if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
        const std::string digits = text_.substr(start, pos_ - start);
        const bool more = pos_ < text_.size() && std::strchr(".eE\"tfn", text_[pos_]) != nullptr;
        if (digits.empty() || digits == "-" || more) fail("param " + name + " must be an integer");
        errno = 0;
        char* end = nullptr;
        const long long value = std::strtoll(digits.c_str(), &end, 10);
        if (errno == ERANGE) fail("param " + name + " must be an integer, got " + digits);
        return value;
    }

    void end() {
        skip_space();
        if (pos_ != text_.size()) fail("trailing data after the JSON object");
    }

private:
    void skip_space() {
        while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
    }

    std::string text_;
    std::size_t pos_ = 0;
};

struct Request {
    const KernelEntry* kernel = nullptr;
    peer::Params params;
};

Request parse(const std::string& text) {
    Reader reader(text);
    std::string kernel_name;
    std::map<std::string, std::int64_t> given;
    std::map<std::string, std::string> given_text;  // a parameter given as a string
    bool have_kernel = false;
    reader.expect('{');
    for (bool first = true; !reader.next_is('}'); first = false) {
        if (!first) reader.expect(',');
        const std::string key = reader.string();
        reader.expect(':');
        if (key == "kernel") {
            kernel_name = reader.string();
            have_kernel = true;
        } else if (key == "params") {
            reader.expect('{');
            for (bool first_param = true; !reader.next_is('}'); first_param = false) {
                if (!first_param) reader.expect(',');
                const std::string name = reader.string();
                reader.expect(':');
                if (reader.next_is('"')) given_text[name] = reader.string();
                else given[name] = reader.integer(name);
            }
            reader.expect('}');
        } else {
            fail("bad request: unknown field '" + key + "'");
        }
    }
    reader.expect('}');
    reader.end();
    if (!have_kernel) fail("bad request: no kernel");

    Request request;
    for (const KernelEntry& entry : kKernels)
        if (kernel_name == entry.name) request.kernel = &entry;
    if (request.kernel == nullptr)
        fail("unknown kernel '" + kernel_name + "' (this peer runs skynet, ping_pong, thread_ring)");
    const auto known = [&](const std::string& name) {
        return request.kernel->params.count(name) != 0 || name == "dispatcher" || name == "threads";
    };
    for (const auto& [name, value] : given)
        if (!known(name)) fail("unknown param '" + name + "' for kernel " + kernel_name);
    for (const auto& [name, value] : given_text)
        if (!known(name)) fail("unknown param '" + name + "' for kernel " + kernel_name);

    std::string allowed;
    for (const DispatcherEntry& entry : kDispatchers) allowed += std::string(allowed.empty() ? "" : ", ") + entry.name;
    const DispatcherEntry* dispatcher = &kDispatchers[0];
    if (given.count("dispatcher") != 0) fail("param dispatcher must be one of: " + allowed + "; got an integer");
    if (const auto found = given_text.find("dispatcher"); found != given_text.end()) {
        dispatcher = nullptr;
        for (const DispatcherEntry& entry : kDispatchers)
            if (found->second == entry.name) dispatcher = &entry;
        if (dispatcher == nullptr)
            fail("param dispatcher must be one of: " + allowed + "; got '" + found->second + "'");
    }
    for (const auto& [name, text] : given_text)
        if (name != "dispatcher") fail("param " + name + " must be an integer");

    const auto value_of = [&](const std::string& name, const Spec& spec) {
        const auto found = given.find(name);
        const std::int64_t value = found == given.end() ? spec.default_value : found->second;
        if (value < spec.minimum || value > spec.maximum)
            fail("param " + name + "=" + std::to_string(value) + " out of range [" + std::to_string(spec.minimum) +
                 ", " + std::to_string(spec.maximum) + "]");
        return value;
    };
    for (const auto& [name, spec] : request.kernel->params) request.params.integers[name] = value_of(name, spec);
    request.params.algorithm = dispatcher->algorithm;
    if (dispatcher->takes_threads) request.params.threads = unsigned(value_of("threads", kThreads));
    else if (given.count("threads") != 0)
        fail(std::string("param threads does not apply to dispatcher ") + dispatcher->name +
             " (it runs on one thread)");
    if (const auto messages = request.params.integers.find("messages");
        messages != request.params.integers.end() && messages->second % 2 != 0)
        fail("param messages=" + std::to_string(messages->second) + " must be even (pings plus pongs)");
    return request;
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The process's resident set in KiB (VmRSS in /proc/self/status).
std::uint64_t resident_kb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
    }
    peer::fail("/proc/self/status has no VmRSS");
}

// The reply, with the resident set (KiB) before the kernel's set-up: beside the fibers made,
// labctl's memory per agent.
void print(const peer::Reply& reply, std::uint64_t rss_before_kb) {
    std::string line = "{\"elapsed_ns\": " + std::to_string(reply.elapsed_ns) +
                       ", \"messages\": " + std::to_string(reply.messages) + ", \"answer\": " + quoted(reply.answer) +
                       ", \"rss_before_kb\": " + std::to_string(rss_before_kb);
    if (reply.agents_created > 0) line += ", \"agents_created\": " + std::to_string(reply.agents_created);
    if (!reply.metrics.empty()) {
        line += ", \"metrics\": {";
        for (std::size_t i = 0; i < reply.metrics.size(); ++i) {
            char number[64];
            std::snprintf(number, sizeof number, "%.17g", reply.metrics[i].second);
            line += (i ? ", " : "") + quoted(reply.metrics[i].first) + ": " + number;
        }
        line += "}";
    }
    std::cout << line << "}" << std::endl;
}

}  // namespace

int main() {
    std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    if (input.find_first_not_of(" \t\r\n") == std::string::npos) peer::fail("empty request on stdin");
    const Request request = parse(input);
    peer::fault();  // a bad value is refused before any work
    const std::uint64_t rss_before_kb = resident_kb();
    try {
        print(request.kernel->run(request.params), rss_before_kb);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "labctl-boost-fiber-peer: %s: %s\n", request.kernel->name, error.what());
        return 1;
    }
    return 0;
}
