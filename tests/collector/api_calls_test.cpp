// API records from callbacks (collector/src/calls/api_calls.hpp): entry and exit paired per thread, nesting, exits
// without entries, batches handed over when full and on flush, the collector's own calls marked, threads that end.
#include "calls/api_calls.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <thread>

using namespace fp8scope::collector;

namespace {

constexpr auto kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr CUpti_CallbackId kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr CUpti_CallbackId kCuLaunch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
constexpr CUpti_CallbackId kMemcpy = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;

// Collects what the sink is handed; refuses when told to.
struct Sink {
    std::mutex mutex;
    std::vector<ApiCallBatch> batches;
    bool refuse = false;

    Sink()
    {
        set_api_call_sink([this](ApiCallBatch&& calls) {
            std::lock_guard lock(mutex);
            if (refuse)
                return false;
            batches.push_back(std::move(calls));
            return true;
        });
    }
    ~Sink() { set_api_call_sink({}); }
    std::vector<ApiCall> all()
    {
        std::vector<ApiCall> out;
        for (const auto& b : batches)
            out.insert(out.end(), b.begin(), b.end());
        return out;
    }
};

CUpti_CallbackData data_with(uint32_t correlation, void* result = nullptr)
{
    CUpti_CallbackData d {};
    d.correlationId = correlation;
    d.functionReturnValue = result;
    return d;
}

} // namespace

TEST_CASE("a call's entry and exit make one record with its times, ids and result")
{
    Sink sink;
    flush_api_calls(); // what earlier tests left on this thread
    sink.batches.clear();
    int error = 719;
    api_call_enter(kRuntime, kLaunch, 1000, 1, true);
    api_call_exit(kRuntime, kLaunch, data_with(42, &error), 1500, 1, true, 77);
    CHECK(sink.all().empty()); // held in the thread's batch until a flush
    CHECK(flush_api_calls() == 0);
    const auto calls = sink.all();
    REQUIRE(calls.size() == 1);
    const CUpti_ActivityAPI& r = calls[0].record;
    CHECK(r.kind == CUPTI_ACTIVITY_KIND_RUNTIME);
    CHECK(r.cbid == kLaunch);
    CHECK(r.start == 1000);
    CHECK(r.end == 1500);
    CHECK(r.correlationId == 42);
    CHECK(r.processId == 77);
    CHECK(r.threadId != 0);
    CHECK(r.returnValue == 719);
    CHECK_FALSE(calls[0].own_work);
}

TEST_CASE("a driver call inside a runtime call makes no record of its own, a driver call alone does")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    api_call_enter(kRuntime, kLaunch, 100, 1, true);
    api_call_enter(kDriver, kCuLaunch, 110, 1, true); // cudaLaunchKernel's own cuLaunchKernel (found on the H100)
    api_call_exit(kDriver, kCuLaunch, data_with(7), 120, 1, true, 1);
    api_call_exit(kRuntime, kLaunch, data_with(7), 130, 1, true, 1);
    api_call_enter(kDriver, kCuLaunch, 140, 1, true); // Triton's launch through the driver
    api_call_exit(kDriver, kCuLaunch, data_with(8), 150, 1, true, 1);
    flush_api_calls();
    const auto calls = sink.all();
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].record.kind == CUPTI_ACTIVITY_KIND_RUNTIME);
    CHECK(calls[0].record.start == 100);
    CHECK(calls[0].record.end == 130);
    CHECK(calls[1].record.kind == CUPTI_ACTIVITY_KIND_DRIVER);
    CHECK(calls[1].record.correlationId == 8);
    CHECK(calls[1].record.start == 140);
}

TEST_CASE("an exit without its entry, a call outside a window and a stale attachment keep nothing")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    api_call_exit(kRuntime, kMemcpy, data_with(1), 50, 1, true, 1); // callbacks switched on mid-call
    api_call_enter(kRuntime, kMemcpy, 60, 1, false);
    api_call_exit(kRuntime, kMemcpy, data_with(2), 70, 1, false, 1); // no window open: not kept, still paired
    api_call_enter(kRuntime, kLaunch, 80, 1, true);
    api_call_exit(kRuntime, kLaunch, data_with(3), 90, 2, true, 1); // CUPTI attached again meanwhile
    api_call_enter(kRuntime, kLaunch, 100, 2, true);
    api_call_exit(kRuntime, kLaunch, data_with(4), 110, 2, true, 1);
    flush_api_calls();
    const auto calls = sink.all();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].record.correlationId == 4);
    CHECK(calls[0].record.start == 100);
}

TEST_CASE("a call across a window's edge is kept, whichever edge it crosses")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    api_call_enter(kRuntime, kLaunch, 10, 6, true); // the window closes during the launch
    api_call_exit(kRuntime, kLaunch, data_with(1), 20, 6, false, 1);
    api_call_enter(kRuntime, kLaunch, 30, 6, false); // it opens during the launch
    api_call_exit(kRuntime, kLaunch, data_with(2), 40, 6, true, 1);
    flush_api_calls();
    const auto calls = sink.all();
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].record.correlationId == 1);
    CHECK(calls[1].record.correlationId == 2);
}

TEST_CASE("an entry whose exit never came does not swallow the next calls")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    api_call_enter(kRuntime, kMemcpy, 10, 3, true); // its exit is lost
    api_call_enter(kRuntime, kLaunch, 20, 3, true);
    api_call_exit(kRuntime, kLaunch, data_with(5), 30, 3, true, 1);
    api_call_enter(kRuntime, kLaunch, 40, 3, true);
    api_call_exit(kRuntime, kLaunch, data_with(6), 50, 3, true, 1);
    flush_api_calls();
    const auto calls = sink.all();
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].record.start == 20);
    CHECK(calls[1].record.start == 40);
}

TEST_CASE("a full batch goes to the sink at once, the collector's own calls are marked")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    for (uint32_t i = 0; i < kApiCallBatch; ++i) {
        if (i == 3)
            enter_own_work();
        api_call_enter(kRuntime, kLaunch, 2 * i, 4, true);
        api_call_exit(kRuntime, kLaunch, data_with(i + 1), 2 * i + 1, 4, true, 1);
        if (i == 3)
            leave_own_work();
    }
    REQUIRE(sink.batches.size() == 1); // handed over by the thread that filled it, no flush needed
    REQUIRE(sink.batches[0].size() == kApiCallBatch);
    for (uint32_t i = 0; i < kApiCallBatch; ++i)
        CHECK(sink.batches[0][i].own_work == (i == 3));
    CHECK(flush_api_calls() == 0);
    CHECK(sink.all().size() == kApiCallBatch);
}

TEST_CASE("records of a thread that ended are flushed, and a refusing sink counts what it lost")
{
    Sink sink;
    flush_api_calls();
    sink.batches.clear();
    std::thread worker([] {
        for (uint32_t i = 0; i < 3; ++i) {
            api_call_enter(kRuntime, kMemcpy, 10 * i, 5, true);
            api_call_exit(kRuntime, kMemcpy, data_with(100 + i), 10 * i + 5, 5, true, 1);
        }
    });
    worker.join();
    CHECK(flush_api_calls() == 0);
    const auto calls = sink.all();
    REQUIRE(calls.size() == 3);
    CHECK(calls[2].record.correlationId == 102);
    CHECK(calls[0].record.threadId != 0);

    api_call_enter(kRuntime, kLaunch, 1, 5, true);
    api_call_exit(kRuntime, kLaunch, data_with(9), 2, 5, true, 1);
    sink.refuse = true;
    CHECK(flush_api_calls() == 1);
    CHECK(flush_api_calls() == 0); // handed over once: not kept for a retry
}
