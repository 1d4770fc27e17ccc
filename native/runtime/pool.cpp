// The slow paths of the pool: refilling a thread's cache from the centre or a new slab,
// flushing a surplus back, and giving memory back to the system when it is all home.
#include "pool.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

namespace labctl::rt::pool {
namespace detail {

constinit thread_local ThreadCache* t_cache LABCTL_FAST_TLS = nullptr;

namespace {

struct Batch {
    FreeBlock* head;
    std::uint32_t count;
};

struct CentralClass {
    std::mutex mutex;
    std::vector<Batch> batches;
    std::size_t free_blocks = 0;    // blocks in `batches`
    std::size_t carved_blocks = 0;  // blocks cut from `slabs`
    std::vector<void*> slabs;
};

constexpr std::size_t kSlabAlignment = 64;

struct Central {
    std::array<CentralClass, kClassCount> classes;

    ~Central() {
        for (CentralClass& c : classes)
            for (void* slab : c.slabs) ::operator delete(slab, std::align_val_t{kSlabAlignment});
    }
};

Central& central() {
    static Central instance;
    return instance;
}

// Gives `count` blocks starting at `head` (linked) to the centre.
void give_back(unsigned cls, FreeBlock* head, std::uint32_t count) {
    CentralClass& c = central().classes[cls];
    std::lock_guard lock(c.mutex);
    c.batches.push_back({head, count});
    c.free_blocks += count;
}

void flush_all(ThreadCache& cache) noexcept {
    for (unsigned cls = 0; cls < kClassCount; ++cls) {
        Bin& bin = cache.bins[cls];
        if (bin.count == 0) continue;
        give_back(cls, bin.head, bin.count);
        bin = Bin{};
    }
}

struct CacheOwner {
    ThreadCache cache;
    ~CacheOwner() {
        flush_all(cache);
        t_cache = nullptr;
    }
};

}  // namespace

ThreadCache* init_thread_cache() {
    // A thread_local with a destructor: the cache goes back to the centre when the thread ends.
    static thread_local CacheOwner owner;
    t_cache = &owner.cache;
    return t_cache;
}

void* refill(ThreadCache& cache, unsigned cls) {
    Bin& bin = cache.bins[cls];
    CentralClass& c = central().classes[cls];
    {
        std::lock_guard lock(c.mutex);
        if (!c.batches.empty()) {
            const Batch batch = c.batches.back();
            c.batches.pop_back();
            c.free_blocks -= batch.count;
            bin.head = batch.head;
            bin.count = batch.count;
        } else {
            const std::size_t size = class_size(cls);
            const std::uint32_t count = batch_size(cls);
            auto* slab = static_cast<char*>(
                ::operator new(size * count, std::align_val_t{kSlabAlignment}));
            c.slabs.push_back(slab);
            c.carved_blocks += count;
            FreeBlock* head = nullptr;
            for (std::uint32_t i = count; i-- > 0;) {
                auto* block = reinterpret_cast<FreeBlock*>(slab + i * size);
                block->next = head;
                head = block;
                poison(block, size);
            }
            bin.head = head;
            bin.count = count;
        }
    }
    FreeBlock* block = bin.head;
    bin.head = block->next;
    --bin.count;
    unpoison(block, class_size(cls));
    return block;
}

void flush(ThreadCache& cache, unsigned cls) {
    Bin& bin = cache.bins[cls];
    const std::uint32_t count = batch_size(cls);
    FreeBlock* head = bin.head;
    FreeBlock* last = head;
    for (std::uint32_t i = 1; i < count; ++i) last = last->next;
    bin.head = last->next;
    bin.count -= count;
    last->next = nullptr;
    give_back(cls, head, count);
}

}  // namespace detail

void trim() noexcept {
    if (detail::t_cache != nullptr) detail::flush_all(*detail::t_cache);
    for (detail::CentralClass& c : detail::central().classes) {
        std::lock_guard lock(c.mutex);
        if (c.free_blocks != c.carved_blocks) continue;  // someone still holds a block
        for (void* slab : c.slabs) ::operator delete(slab, std::align_val_t{detail::kSlabAlignment});
        c.slabs.clear();
        c.batches.clear();
        c.free_blocks = c.carved_blocks = 0;
    }
}

Stats stats() noexcept {
    Stats s;
    for (unsigned cls = 0; cls < kClassCount; ++cls) {
        detail::CentralClass& c = detail::central().classes[cls];
        std::lock_guard lock(c.mutex);
        s.slab_bytes += c.carved_blocks * class_size(cls);
        s.blocks_out += c.carved_blocks - c.free_blocks;
        if (detail::t_cache != nullptr) s.blocks_out -= detail::t_cache->bins[cls].count;
    }
    return s;
}

}  // namespace labctl::rt::pool
