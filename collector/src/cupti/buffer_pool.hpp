// BufferPool: the activity buffers handed to CUPTI (docs/collector.md "Hot path": a pool of pre-allocated buffers with
// a cap). CUPTI asks for a buffer from whichever thread fills one, which can be an application thread inside a launch,
// so acquire() and release() take no lock: each slot has an atomic in-use flag. Buffers beyond the pre-allocated ones
// are allocated on demand up to the cap; after that acquire() fails and CUPTI drops records, which it counts and the
// collector stores. Every buffer handed out is zero-filled: zeroed when allocated and again in release() (on the
// writer thread, which drains them), so that CUPTI, told so (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
// cupti_settings.hpp), need not clear a 4 MiB buffer on the application thread that asked for it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace fp8scope::collector {

class BufferPool {
public:
    static constexpr size_t kMaxBuffers = 256;

    // buffer_bytes is rounded up to a multiple of 8 (CUPTI wants 8-byte aligned buffers).
    BufferPool(size_t buffer_bytes, size_t preallocated, size_t cap);
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    // A free buffer of buffer_bytes(), or null when all `cap` buffers are in use (counted in exhausted()).
    uint8_t* acquire();
    // Returns a buffer obtained from acquire(), zero-filled again first. Ignores pointers the pool does not own.
    void release(uint8_t* buffer);

    size_t buffer_bytes() const { return buffer_bytes_; }
    size_t allocated() const { return allocated_.load(std::memory_order_acquire); }
    size_t in_use() const;
    int64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
    size_t high_water() const { return high_water_.load(std::memory_order_relaxed); }

private:
    void note_in_use();

    struct Slot {
        std::atomic<uint8_t*> buffer { nullptr };
        std::atomic<bool> in_use { false };
    };
    size_t buffer_bytes_;
    size_t cap_;
    std::unique_ptr<Slot[]> slots_;
    std::atomic<size_t> allocated_ { 0 }; // slots [0, allocated_) hold a buffer or are being filled
    std::atomic<size_t> in_use_count_ { 0 };
    std::atomic<size_t> high_water_ { 0 };
    std::atomic<int64_t> exhausted_ { 0 };
};

} // namespace fp8scope::collector
