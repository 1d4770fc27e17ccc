// The slow paths of the pool: refilling a thread's cache from the centre or a new slab,
// flushing a surplus back, and giving memory back to the system when it is all home.
#include "pool.hpp"

#include <sys/mman.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "wait.hpp"

namespace labctl::rt::pool {
namespace detail {

constinit thread_local ThreadCache* t_cache LABCTL_FAST_TLS = nullptr;

namespace {

struct Batch {
    FreeBlock* head;
    std::uint32_t count;
};

// The centre's locks are spin locks: each guards a few words (a batch popped or pushed, a
// cursor moved), and two workers allocating at once (skynet's agents on a two-thread pool)
// made a glibc mutex sleep in the kernel and wake again, 3% of that run's samples.
struct CentralClass {
    SpinLock lock;
    std::vector<Batch> batches;
    std::size_t free_blocks = 0;    // blocks in `batches`
    std::size_t carved_blocks = 0;  // blocks cut from slabs
};

// Slabs are cut from 2 MiB chunks mapped from the system. Fresh memory is what makes a
// kernel's first run in a process slow (skynet: 67k page faults, ~300 ms against ~60 ms once
// warm), so chunks are kept: recycle() starts carving them again from the first one. Neither
// cure for the first run held up on this VM: MADV_HUGEPAGE stalled up to 1.3 s in direct
// compaction (THP defrag=madvise), and MAP_POPULATE only moved the ~250 ms of zeroing into mmap.
class Arena {
public:
    static constexpr std::size_t kChunk = std::size_t{2} << 20;

    ~Arena() { release(); }

    void* take(std::size_t bytes) {
        std::lock_guard lock(lock_);
        bytes = (bytes + 63) & ~std::size_t{63};
        if (bytes > std::size_t(limit_ - cursor_)) {
            if (next_ == chunks_.size()) chunks_.push_back(new_chunk());
            cursor_ = static_cast<char*>(chunks_[next_++]);
            limit_ = cursor_ + kChunk;
        }
        void* p = cursor_;
        cursor_ += bytes;
        return p;
    }

    // Carves from the first chunk again; every block cut so far must be forgotten.
    void recycle() noexcept {
        std::lock_guard lock(lock_);
        next_ = 0;
        cursor_ = limit_ = nullptr;
    }

    void release() noexcept {
        std::lock_guard lock(lock_);
        for (void* chunk : chunks_) free_chunk(chunk);
        chunks_.clear();
        next_ = 0;
        cursor_ = limit_ = nullptr;
    }

    std::size_t bytes() noexcept {
        std::lock_guard lock(lock_);
        return chunks_.size() * kChunk;
    }

private:
#ifdef LABCTL_SANITIZED
    // Sanitizer builds keep chunks on the heap, where LeakSanitizer looks for pointers.
    static void* new_chunk() { return ::operator new(kChunk, std::align_val_t{kChunk}); }
    static void free_chunk(void* chunk) noexcept { ::operator delete(chunk, std::align_val_t{kChunk}); }
#else
    static void* new_chunk() {
        // Over-map by one chunk and trim both ends: a chunk-aligned chunk.
        void* region = mmap(nullptr, 2 * kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED) throw std::bad_alloc();
        const auto start = reinterpret_cast<std::uintptr_t>(region);
        const std::uintptr_t aligned = (start + kChunk - 1) & ~(kChunk - 1);
        if (aligned > start) munmap(region, aligned - start);
        const std::uintptr_t end = start + 2 * kChunk;
        if (aligned + kChunk < end) munmap(reinterpret_cast<void*>(aligned + kChunk), end - aligned - kChunk);
        return reinterpret_cast<void*>(aligned);
    }
    static void free_chunk(void* chunk) noexcept { munmap(chunk, kChunk); }
#endif

    SpinLock lock_;  // a new chunk is mapped under it: once per 2 MiB
    std::vector<void*> chunks_;
    std::size_t next_ = 0;  // the chunk to carve after the current one
    char* cursor_ = nullptr;
    char* limit_ = nullptr;
};

struct Central {
    std::array<CentralClass, kClassCount> classes;
    Arena arena;
};

Central& central() {
    static Central instance;
    return instance;
}

// Gives `count` blocks starting at `head` (linked) to the centre.
void give_back(unsigned cls, FreeBlock* head, std::uint32_t count) {
    CentralClass& c = central().classes[cls];
    std::lock_guard lock(c.lock);
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
    const std::uint32_t count = batch_size(cls);
    bool carve = false;
    {
        std::lock_guard lock(c.lock);
        if (!c.batches.empty()) {
            const Batch batch = c.batches.back();
            c.batches.pop_back();
            c.free_blocks -= batch.count;
            bin.head = batch.head;
            bin.count = batch.count;
        } else {
            // Counted out now, carved below outside the lock: until they come back they are
            // this thread's, as any batch it holds.
            c.carved_blocks += count;
            carve = true;
        }
    }
    if (carve) {
        const std::size_t size = class_size(cls);
        char* slab;
        try {
            slab = static_cast<char*>(central().arena.take(size * count));
        } catch (...) {
            std::lock_guard lock(c.lock);
            c.carved_blocks -= count;
            throw;
        }
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

namespace {
// Runs `then` on the arena if every block of every class is home, forgetting the free lists;
// returns whether it did. Holding every class's lock makes the check and the reset one step.
template <class Then>
bool when_all_home(Then&& then) noexcept {
    if (detail::t_cache != nullptr) detail::flush_all(*detail::t_cache);
    detail::Central& central = detail::central();
    std::array<std::unique_lock<SpinLock>, kClassCount> locks;
    for (unsigned cls = 0; cls < kClassCount; ++cls) {
        detail::CentralClass& c = central.classes[cls];
        locks[cls] = std::unique_lock(c.lock);
        if (c.free_blocks != c.carved_blocks) return false;
    }
    for (detail::CentralClass& c : central.classes) {
        c.batches.clear();
        c.free_blocks = c.carved_blocks = 0;
    }
    then(central.arena);
    return true;
}
}  // namespace

bool recycle() noexcept {
    return when_all_home([](detail::Arena& arena) { arena.recycle(); });
}

bool release() noexcept {
    return when_all_home([](detail::Arena& arena) { arena.release(); });
}

Stats stats() noexcept {
    Stats s;
    s.slab_bytes = detail::central().arena.bytes();
    for (unsigned cls = 0; cls < kClassCount; ++cls) {
        detail::CentralClass& c = detail::central().classes[cls];
        std::lock_guard lock(c.lock);
        s.blocks_out += c.carved_blocks - c.free_blocks;
        if (detail::t_cache != nullptr) s.blocks_out -= detail::t_cache->bins[cls].count;
    }
    return s;
}

}  // namespace labctl::rt::pool
