// Starting and joining a pthread with a chosen stack size.
#include "thread.hpp"

#include <limits.h>
#include <unistd.h>

#include <exception>
#include <memory>
#include <string>
#include <system_error>

namespace labctl::rt {
namespace {

void* trampoline(void* argument) {
    const std::unique_ptr<std::function<void()>> body(static_cast<std::function<void()>*>(argument));
    // As std::thread: an exception that leaves the thread's body ends the process.
    try {
        (*body)();
    } catch (...) {
        std::terminate();
    }
    return nullptr;
}

// Closes an attribute object on every path out.
struct Attributes {
    pthread_attr_t value;
    Attributes() {
        if (const int error = pthread_attr_init(&value); error != 0)
            throw std::system_error(error, std::generic_category(), "pthread_attr_init");
    }
    ~Attributes() { pthread_attr_destroy(&value); }
};

}  // namespace

Thread::Thread(std::function<void()> body, std::size_t stack_bytes) {
    Attributes attributes;
    if (stack_bytes != 0) {
        if (const int error = pthread_attr_setstacksize(&attributes.value, stack_bytes); error != 0)
            throw std::system_error(error, std::generic_category(),
                                    "thread stack of " + std::to_string(stack_bytes) + " bytes");
    }
    auto owned = std::make_unique<std::function<void()>>(std::move(body));
    if (const int error = pthread_create(&handle_, &attributes.value, trampoline, owned.get()); error != 0)
        throw std::system_error(error, std::generic_category(), "pthread_create");
    owned.release();  // the thread owns it now (trampoline)
    joinable_ = true;
}

Thread& Thread::operator=(Thread&& other) noexcept {
    if (joinable_) std::terminate();
    handle_ = other.handle_;
    joinable_ = other.joinable_;
    other.joinable_ = false;
    return *this;
}

Thread::~Thread() {
    if (joinable_) std::terminate();
}

void Thread::join() {
    if (!joinable_) throw std::system_error(std::make_error_code(std::errc::invalid_argument), "join");
    if (const int error = pthread_join(handle_, nullptr); error != 0)
        throw std::system_error(error, std::generic_category(), "pthread_join");
    joinable_ = false;
}

std::size_t Thread::min_stack_bytes() noexcept {
    // glibc 2.34 and later: PTHREAD_STACK_MIN is sysconf(_SC_THREAD_STACK_MIN), not a constant.
    const long size = sysconf(_SC_THREAD_STACK_MIN);
    return size > 0 ? std::size_t(size) : std::size_t(PTHREAD_STACK_MIN);
}

}  // namespace labctl::rt
