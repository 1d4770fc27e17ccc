// Per-thread size-class pool: the memory of envelopes, agents and coops.
// A send allocates an envelope and a handler frees it, tens of millions of times a second, so
// the common case is a pop or a push on a thread-private free list with no atomic and no lock.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "tls.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define LABCTL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LABCTL_ASAN 1
#endif
#endif
#ifdef LABCTL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace labctl::rt::pool {

// Size classes: 16-byte steps up to 512 bytes (agents and envelopes are small, and a tight
// class keeps skynet's 1.1M agents in less memory), then powers of two up to 64 KiB.
// Anything larger goes to operator new.
inline constexpr std::size_t kAlignment = 16;
inline constexpr std::size_t kSmallLimit = 512;
inline constexpr std::size_t kMaxPooled = 64 * 1024;
inline constexpr unsigned kSmallClasses = kSmallLimit / kAlignment;  // 32: 16..512
inline constexpr unsigned kClassCount = kSmallClasses + 7;           // + 1K..64K
inline constexpr unsigned kLarge = kClassCount;                      // not pooled

constexpr unsigned size_class(std::size_t bytes) noexcept {
    if (bytes <= kSmallLimit) return bytes == 0 ? 0 : unsigned((bytes - 1) / kAlignment);
    if (bytes > kMaxPooled) return kLarge;
    unsigned cls = kSmallClasses;
    for (std::size_t size = 2 * kSmallLimit; size < bytes; size *= 2) ++cls;
    return cls;
}

constexpr std::size_t class_size(unsigned cls) noexcept {
    if (cls < kSmallClasses) return (cls + 1) * kAlignment;
    return kSmallLimit << (cls - kSmallClasses + 1);
}

static_assert(size_class(16) == 0 && size_class(17) == 1 && size_class(512) == kSmallClasses - 1);
static_assert(size_class(513) == kSmallClasses && class_size(kSmallClasses) == 1024);
static_assert(class_size(kClassCount - 1) == kMaxPooled && size_class(kMaxPooled + 1) == kLarge);

struct FreeBlock {
    FreeBlock* next;
};

struct Bin {
    FreeBlock* head = nullptr;
    std::uint32_t count = 0;
};

struct ThreadCache {
    Bin bins[kClassCount];
};

namespace detail {
extern constinit thread_local ThreadCache* t_cache LABCTL_FAST_TLS;
ThreadCache* init_thread_cache();
void* refill(ThreadCache& cache, unsigned cls);
void flush(ThreadCache& cache, unsigned cls);

// A batch moves between a thread and the centre in one lock: about 16 KiB of blocks, so the
// lock is taken once per hundreds of small allocations. A thread keeps at most two batches.
constexpr std::uint32_t batch_size(unsigned cls) noexcept {
    const std::size_t blocks = 16 * 1024 / class_size(cls);
    return std::uint32_t(blocks < 8 ? 8 : blocks > 256 ? 256 : blocks);
}
inline constexpr auto kHighWater = [] {
    std::array<std::uint32_t, kClassCount> table{};
    for (unsigned cls = 0; cls < kClassCount; ++cls) table[cls] = 2 * batch_size(cls);
    return table;
}();

inline void poison(void* p, std::size_t bytes) noexcept {
#ifdef LABCTL_ASAN
    // The first word stays readable: it links the block into a free list.
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(FreeBlock), bytes - sizeof(FreeBlock));
#else
    (void)p, (void)bytes;
#endif
}
inline void unpoison(void* p, std::size_t bytes) noexcept {
#ifdef LABCTL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
    (void)p, (void)bytes;
#endif
}
}  // namespace detail

inline ThreadCache& thread_cache() {
    ThreadCache* cache = detail::t_cache;
    if (cache == nullptr) [[unlikely]] cache = detail::init_thread_cache();
    return *cache;
}

inline void* allocate(std::size_t bytes) {
    const unsigned cls = size_class(bytes);
    if (cls == kLarge) [[unlikely]] return ::operator new(bytes, std::align_val_t{kAlignment});
    ThreadCache& cache = thread_cache();
    Bin& bin = cache.bins[cls];
    if (FreeBlock* block = bin.head) [[likely]] {
        bin.head = block->next;
        --bin.count;
        detail::unpoison(block, class_size(cls));
        return block;
    }
    return detail::refill(cache, cls);
}

inline void deallocate(void* p, std::size_t bytes) noexcept {
    const unsigned cls = size_class(bytes);
    if (cls == kLarge) [[unlikely]] {
        ::operator delete(p, std::align_val_t{kAlignment});
        return;
    }
    ThreadCache& cache = thread_cache();
    Bin& bin = cache.bins[cls];
    auto* block = static_cast<FreeBlock*>(p);
    block->next = bin.head;
    bin.head = block;
    detail::poison(block, class_size(cls));
    // A thread that frees what others allocate (a consumer of a producer's envelopes) would
    // hoard memory without bound; past the high-water mark a batch goes back to the centre.
    if (++bin.count > detail::kHighWater[cls]) [[unlikely]] detail::flush(cache, cls);
}

template <class T, class... Args>
T* make(Args&&... args) {
    static_assert(alignof(T) <= kAlignment, "pool blocks are 16-byte aligned");
    void* p = allocate(sizeof(T));
    try {
        return ::new (p) T(std::forward<Args>(args)...);
    } catch (...) {
        deallocate(p, sizeof(T));
        throw;
    }
}

template <class T>
void destroy(T* p) noexcept {
    p->~T();
    deallocate(p, sizeof(T));
}

// Both return every block the calling thread caches to the centre, and act only if every block
// of every class is then home (call them when no other thread allocates: after a kernel run,
// its runtime threads gone); they return whether they did.
// recycle: forgets the free lists and carves from the start of the memory again. A run that
// freed a million agents in completion order leaves them scrambled, and the next run would
// create its agents in that order (skynet, 12 runs in one process: 59 ms growing to 285 ms).
bool recycle() noexcept;
// release: gives the memory back to the system.
bool release() noexcept;

struct Stats {
    std::size_t slab_bytes = 0;    // chunks taken from the system and not given back
    std::size_t blocks_out = 0;    // blocks carved and not back in the centre or this thread
};
Stats stats() noexcept;

}  // namespace labctl::rt::pool
