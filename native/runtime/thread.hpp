// A joinable thread whose stack size can be chosen: std::thread cannot, and active_obj starts a
// thread per agent, where the size is what decides how many fit (the Boost.Fiber study's
// pthreads had 8 kB stacks; the default here is the system's, 8 MiB of address space each).
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace labctl::rt {

class Thread {
public:
    Thread() noexcept = default;
    // Starts `body` on a new thread with a stack of `stack_bytes` (0: the system's default; else
    // at least PTHREAD_STACK_MIN). Throws std::system_error if the system refuses (EAGAIN: out of
    // threads or memory; EINVAL: a size the system does not take).
    explicit Thread(std::function<void()> body, std::size_t stack_bytes = 0);
    Thread(Thread&& other) noexcept : handle_(other.handle_), joinable_(other.joinable_) { other.joinable_ = false; }
    Thread& operator=(Thread&& other) noexcept;
    Thread(const Thread&) = delete;
    Thread& operator=(const Thread&) = delete;
    // As std::thread's: a thread still joinable here is a program error (std::terminate).
    ~Thread();

    bool joinable() const noexcept { return joinable_; }
    void join();

    // The smallest stack the system takes, in bytes (PTHREAD_STACK_MIN, read at run time).
    static std::size_t min_stack_bytes() noexcept;

private:
    pthread_t handle_{};
    bool joinable_ = false;
};

}  // namespace labctl::rt
