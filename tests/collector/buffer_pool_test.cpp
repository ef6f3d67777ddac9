#include "cupti/buffer_pool.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using fp8scope::collector::BufferPool;

TEST_CASE("the pool hands out distinct aligned buffers, grows to its cap, then refuses and counts")
{
    BufferPool pool(100'000, 2, 4);
    CHECK(pool.buffer_bytes() % 64 == 0);
    CHECK(pool.buffer_bytes() >= 100'000);
    CHECK(pool.allocated() == 2);
    std::set<uint8_t*> taken;
    for (int i = 0; i < 4; ++i) {
        uint8_t* b = pool.acquire();
        REQUIRE(b != nullptr);
        CHECK(reinterpret_cast<uintptr_t>(b) % 8 == 0); // CUPTI's alignment requirement
        taken.insert(b);
    }
    CHECK(taken.size() == 4);
    CHECK(pool.allocated() == 4);
    CHECK(pool.acquire() == nullptr);
    CHECK(pool.exhausted() == 1);
    CHECK(pool.high_water() == 4);
    pool.release(*taken.begin());
    CHECK(pool.in_use() == 3);
    CHECK(pool.acquire() == *taken.begin()); // reused, not reallocated
    CHECK(pool.allocated() == 4);
    int not_ours = 0;
    pool.release(reinterpret_cast<uint8_t*>(&not_ours)); // ignored
    CHECK(pool.in_use() == 4);
}

TEST_CASE("concurrent acquire and release never hand one buffer to two owners")
{
    BufferPool pool(64 * 1024, 1, 8);
    std::atomic<int> collisions { 0 };
    std::atomic<int64_t> got { 0 };
    std::mutex owned_mutex;
    std::set<uint8_t*> owned;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20'000; ++i) {
                uint8_t* b = pool.acquire();
                if (!b)
                    continue;
                // The set of buffers held right now: a buffer handed to a second owner is already in it.
                {
                    std::lock_guard lock(owned_mutex);
                    if (!owned.insert(b).second)
                        collisions.fetch_add(1);
                }
                got.fetch_add(1);
                {
                    std::lock_guard lock(owned_mutex);
                    owned.erase(b);
                }
                pool.release(b);
            }
        });
    }
    for (auto& t : threads)
        t.join();
    CHECK(collisions.load() == 0);
    CHECK(got.load() + pool.exhausted() == 80'000);
    CHECK(pool.in_use() == 0);
    CHECK(pool.allocated() <= 8);
}

TEST_CASE("every buffer handed out is zero-filled: pre-allocated, grown, and given back after CUPTI wrote to it")
{
    // CUPTI is told the buffers come zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) and then clears
    // nothing itself: a byte left over from the last use would reach the decoder as part of a record.
    BufferPool pool(64 * 1024, 1, 2);
    auto all_zero = [&pool](const uint8_t* b) {
        return std::all_of(b, b + pool.buffer_bytes(), [](uint8_t byte) { return byte == 0; });
    };
    uint8_t* first = pool.acquire();
    uint8_t* grown = pool.acquire();
    REQUIRE(first != nullptr);
    REQUIRE(grown != nullptr);
    CHECK(pool.allocated() == 2);
    CHECK(all_zero(first));
    CHECK(all_zero(grown));
    std::fill(first, first + pool.buffer_bytes(), uint8_t { 0xAB });
    first[pool.buffer_bytes() - 1] = 0x5A; // the last byte too, not only a prefix
    pool.release(first);
    uint8_t* again = pool.acquire();
    REQUIRE(again == first);
    CHECK(all_zero(again));
}
