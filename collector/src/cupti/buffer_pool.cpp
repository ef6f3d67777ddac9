#include "cupti/buffer_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace fp8scope::collector {
namespace {
// Zero-filled, which also touches every page now rather than when CUPTI first writes to it.
uint8_t* allocate_buffer(size_t bytes)
{
    auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
    if (buffer)
        std::memset(buffer, 0, bytes);
    return buffer;
}
} // namespace

BufferPool::BufferPool(size_t buffer_bytes, size_t preallocated, size_t cap)
    : buffer_bytes_((std::max<size_t>(buffer_bytes, 64 * 1024) + 63) / 64 * 64)
    , cap_(std::clamp<size_t>(cap, 1, kMaxBuffers))
    , slots_(new Slot[cap_])
{
    preallocated = std::min(preallocated, cap_);
    for (size_t i = 0; i < preallocated; ++i) {
        uint8_t* buffer = allocate_buffer(buffer_bytes_);
        if (!buffer)
            break;
        slots_[i].buffer.store(buffer, std::memory_order_relaxed);
        allocated_.store(i + 1, std::memory_order_release);
    }
}

BufferPool::~BufferPool()
{
    for (size_t i = 0; i < cap_; ++i)
        std::free(slots_[i].buffer.load(std::memory_order_relaxed));
}

uint8_t* BufferPool::acquire()
{
    auto take = [this](Slot& slot) -> uint8_t* {
        bool expected = false;
        if (!slot.in_use.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
            return nullptr;
        uint8_t* buffer = slot.buffer.load(std::memory_order_acquire);
        if (!buffer) { // a slot claimed for growth whose allocation is still under way
            slot.in_use.store(false, std::memory_order_release);
            return nullptr;
        }
        note_in_use();
        return buffer;
    };
    const size_t allocated = allocated_.load(std::memory_order_acquire);
    for (size_t i = 0; i < allocated; ++i)
        if (uint8_t* buffer = take(slots_[i]))
            return buffer;
    // Grow: claim the next slot index, allocate, then publish. Rare (only when every buffer is in flight).
    size_t index = allocated_.load(std::memory_order_acquire);
    while (index < cap_) {
        if (allocated_.compare_exchange_weak(index, index + 1, std::memory_order_acq_rel)) {
            Slot& slot = slots_[index];
            slot.in_use.store(true, std::memory_order_relaxed);
            uint8_t* buffer = allocate_buffer(buffer_bytes_);
            if (!buffer) {
                slot.in_use.store(false, std::memory_order_release);
                break;
            }
            slot.buffer.store(buffer, std::memory_order_release);
            note_in_use();
            return buffer;
        }
    }
    exhausted_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

void BufferPool::note_in_use()
{
    const size_t now = in_use_count_.fetch_add(1, std::memory_order_relaxed) + 1;
    size_t seen = high_water_.load(std::memory_order_relaxed);
    while (now > seen && !high_water_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) { }
}

void BufferPool::release(uint8_t* buffer)
{
    if (!buffer)
        return;
    const size_t allocated = allocated_.load(std::memory_order_acquire);
    for (size_t i = 0; i < allocated; ++i) {
        if (slots_[i].buffer.load(std::memory_order_acquire) == buffer) {
            std::memset(buffer, 0, buffer_bytes_);
            in_use_count_.fetch_sub(1, std::memory_order_relaxed);
            slots_[i].in_use.store(false, std::memory_order_release);
            return;
        }
    }
}

size_t BufferPool::in_use() const
{
    return in_use_count_.load(std::memory_order_relaxed);
}

} // namespace fp8scope::collector
