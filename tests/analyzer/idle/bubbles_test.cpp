// Host-blocking calls, busy time, bubbles and their causes (docs/analysis.md "Busy time and bubbles", "Causes of
// bubbles"): one synthetic scenario per rule with exact numbers, the edge cases, and the recorded sync sample.
#include "analysis_test_support.hpp"
#include "bubbles_test_support.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "timeline_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

void check_sync_scenario(const TraceModel& model)
{
    const auto blocking = find_host_blocking_calls(model);
    REQUIRE(blocking.size() == 1);
    const BubbleAnalysis analysis = analyze_bubbles(model, steps_of({ { 0, 500 } }), blocking);
    CHECK(analysis.epsilon_ns == 80);
    CHECK(analysis.epsilon_samples == 2);
    // [0, 100): the thread was inside CUDA (launch, then the sync) for 85 of 100 ns. [400, 500): nothing follows.
    check_bubbles(analysis,
        { { 0, 100, BubbleCause::Launch }, { 200, 300, BubbleCause::Sync }, { 400, 500, BubbleCause::Host } });
    CHECK(analysis.bubbles[1].sync_call == size_t(0));
    REQUIRE(analysis.per_device_step.size() == 1);
    const BubbleTotals& totals = analysis.per_device_step[0].totals;
    CHECK(totals.step_ns == 500);
    CHECK(totals.busy_ns == 200);
    CHECK(totals.idle_ns == 300);
    CHECK(totals.bubble_ratio == Approx(0.6));
    CHECK(cause_ns(totals, BubbleCause::Sync) == 100);
    CHECK(cause_ns(totals, BubbleCause::Launch) == 100);
    CHECK(cause_ns(totals, BubbleCause::Host) == 100);
    CHECK(totals.gap_counts == std::array<int64_t, kGapBucketCount> { 3, 0, 0, 0 });
    CHECK(analysis.total.idle_ns == 300);
}

} // namespace

TEST_CASE("rule 1: the gap after a sync on the launching thread is charged to the sync", "[bubbles]")
{
    check_sync_scenario(write_and_load(sync_scenario(), "sync"));
}

TEST_CASE("the Nsight Systems layout gives the same bubbles", "[bubbles][nsight]")
{
    check_sync_scenario(write_and_load(sync_scenario(), "sync", Layout::Nsight));
}

TEST_CASE("rule 2: work submitted long before the gap ended is a dependency", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(50, 150)); // latency 40
    s.launch(host, call(20, 30), kernel(150, 250)); // 120
    s.launch(host, call(40, 50), kernel(600, 700)); // 550: launched at 50, long before the gap began
    const BubbleAnalysis analysis = analyze(write_and_load(s, "dependency"), steps_of({ { 0, 1000 } }));
    CHECK(analysis.epsilon_ns == 120);
    check_bubbles(analysis,
        { { 0, 50, BubbleCause::Launch }, { 250, 600, BubbleCause::Dependency }, { 700, 1000, BubbleCause::Host } });
    const BubbleTotals& totals = analysis.total;
    CHECK(cause_ns(totals, BubbleCause::Dependency) == 350);
    CHECK(totals.gap_counts == std::array<int64_t, kGapBucketCount> { 3, 0, 0, 0 });
}

TEST_CASE(
    "rule 3: a thread that keeps issuing work is launch-bound, one silent past its threshold host-bound", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10'000), kernel(20'000, 100'000));
    // The thread keeps calling (every 5 us, 3 us each: its median silence is 2 us, so its threshold is 100 us).
    for (int64_t t = 100'000; t < 180'000; t += 5'000)
        s.api_call(host, call(t, t + 3'000, "cudaEventRecord_v3020"));
    s.launch(host, call(180'000, 190'000), kernel(200'000, 300'000)); // silent at most 10 us of the gap: launch
    s.launch(host, call(480'000, 490'000), kernel(500'000, 600'000)); // silent 290 us (190 to 480): host
    const BubbleAnalysis analysis = analyze(write_and_load(s, "launch-host"), steps_of({ { 20'000, 600'000 } }));
    CHECK(analysis.epsilon_ns == 10'000);
    CHECK(analysis.host_stall_median_silence_ns == 2'000);
    CHECK(analysis.host_stall_threshold_ns == kHostStallMinNs);
    check_bubbles(analysis, { { 100'000, 200'000, BubbleCause::Launch }, { 300'000, 500'000, BubbleCause::Host } });
    const BubbleTotals& totals = analysis.per_device_step[0].totals;
    CHECK(totals.busy_ns == 280'000);
    CHECK(totals.idle_ns == 300'000);
    // Launch gaps shrink to the graph's kernel gap in the CUDA Graphs estimate.
    CHECK(totals.graph_removable_ns == 100'000 - kDefaultGraphKernelGapNs);
}

TEST_CASE("rule 3: calls that overlap without nesting cover the thread until the one that ends last", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10'000), kernel(20'000, 100'000));
    // B starts inside A and ends after it: the thread is inside CUDA from 100 to 290 us, silent 10 us before the next
    // launch. Were the union to end at A's end, the thread would look silent for 170 us, past its threshold (host).
    s.api_call(host, call(100'000, 130'000, "cudaEventRecord_v3020"));
    s.api_call(host, call(120'000, 290'000, "cudaEventQuery_v3020"));
    s.launch(host, call(300'000, 310'000), kernel(320'000, 400'000));
    // Steady calls afterwards (3 us each, every 5 us) make the median silence 2 us: the threshold is kHostStallMinNs.
    for (int64_t t = 500'000; t < 600'000; t += 5'000)
        s.api_call(host, call(t, t + 3'000, "cudaEventRecord_v3020"));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "overlap"), steps_of({ { 20'000, 400'000 } }));
    CHECK(analysis.host_stall_median_silence_ns == 2'000);
    CHECK(analysis.host_stall_threshold_ns == kHostStallMinNs);
    check_bubbles(analysis, { { 100'000, 320'000, BubbleCause::Launch } });
}

TEST_CASE(
    "a driver call sharing the launch's correlation id and start: the runtime call is the launch call", "[bubbles]")
{
    // Built in memory: the driver row comes first (equal starts keep file order), as a tie can leave it.
    TraceModel model = memory_model();
    add_kernel(model, 10, 50); // no launch call
    add_call(model, 100, 150, 5, 2, 1, true); // cuLaunchKernel
    add_call(model, 100, 200, 5); // the cudaLaunchKernel around it
    add_kernel(model, 230, 240, 5);
    const BubbleAnalysis analysis = analyze(model, steps_of({ { 0, 300 } }));
    check_bubbles(analysis,
        { { 0, 10, BubbleCause::Dependency }, { 50, 230, BubbleCause::Launch }, { 240, 300, BubbleCause::Host } });
    CHECK(analysis.bubbles[1].next_api_index == 1u);
    CHECK(analysis.epsilon_samples == 1);
    CHECK(analysis.epsilon_ns == 30); // 230 - 200: after the runtime call, not the driver call (80)
}

TEST_CASE("one stream idle while another is busy is not a bubble", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 5), kernel(10, 100, 7));
    s.launch(host, call(5, 8), kernel(50, 200, 8));
    s.launch(host, call(8, 9), kernel(300, 400, 7));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "streams"), steps_of({ { 10, 400 } }));
    check_bubbles(analysis, { { 200, 300, BubbleCause::Dependency } });
    CHECK(analysis.total.busy_ns == 290);
}

TEST_CASE("busy time and gaps are cut at step boundaries", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(50, 150)); // spans the boundary at 100
    s.launch(host, call(160, 170), kernel(180, 190));
    s.launch(host, call(170, 175), kernel(250, 280));
    s.launch(host, call(175, 178), kernel(320, 400)); // the gap [280, 320) spans the boundary at 300
    const BubbleAnalysis analysis
        = analyze(write_and_load(s, "boundaries"), steps_of({ { 0, 100 }, { 100, 200 }, { 200, 300 }, { 300, 400 } }));
    REQUIRE(analysis.per_device_step.size() == 4);
    CHECK(analysis.per_device_step[0].totals.busy_ns == 50);
    CHECK(analysis.per_device_step[1].totals.busy_ns == 60);
    CHECK(analysis.per_device_step[1].totals.idle_ns == 40);
    CHECK(analysis.per_device_step[2].totals.busy_ns == 30);
    CHECK(analysis.per_device_step[3].totals.busy_ns == 80);
    // Both halves of [280, 320) carry the cause of the whole gap.
    CHECK(analysis.bubbles.back().start_ns == 300);
    CHECK(analysis.bubbles.back().end_ns == 320);
    CHECK(analysis.bubbles.back().step_index == 3);
    CHECK(analysis.bubbles[analysis.bubbles.size() - 2].end_ns == 300);
    CHECK(analysis.bubbles.back().cause == analysis.bubbles[analysis.bubbles.size() - 2].cause);
    CHECK(analysis.total.step_ns == 400);
    CHECK(analysis.total.busy_ns == 220);
}

TEST_CASE("activities with no API row: dependency, or sync when a sync ended in the gap", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    const auto other = s.thread(4242, 4243);
    s.launch(host, call(0, 10), kernel(20, 100));
    s.orphan_kernel(kernel(200, 300));
    s.sync(other, 250, 310, schema::SyncType::ContextSynchronize);
    s.orphan_kernel(kernel(400, 500));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "orphans"), steps_of({ { 20, 500 } }));
    check_bubbles(analysis, { { 100, 200, BubbleCause::Dependency }, { 300, 400, BubbleCause::Sync } });
    CHECK(!analysis.bubbles[0].next_api_index);
    CHECK(analysis.epsilon_samples == 1);
}

TEST_CASE("zero-length activities neither count as busy nor split a gap", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(20, 100));
    s.launch(host, call(10, 20), kernel(150, 150));
    s.launch(host, call(180, 190), kernel(200, 300));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "zero-length"), steps_of({ { 20, 300 } }));
    REQUIRE(analysis.bubbles.size() == 1);
    CHECK(analysis.bubbles[0].start_ns == 100);
    CHECK(analysis.bubbles[0].end_ns == 200);
    CHECK(analysis.total.busy_ns == 180);
}

TEST_CASE("a step with no GPU work is one bubble as long as the step", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(20, 100));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "idle-step"), steps_of({ { 20, 100 }, { 100, 200 } }));
    REQUIRE(analysis.per_device_step.size() == 2);
    CHECK(analysis.per_device_step[0].totals.idle_ns == 0);
    CHECK(analysis.per_device_step[0].totals.bubble_count == 0);
    CHECK(analysis.per_device_step[1].totals.idle_ns == 100);
    CHECK(analysis.per_device_step[1].totals.bubble_ratio == 1.0);
    check_bubbles(analysis, { { 100, 200, BubbleCause::Host } });
    CHECK(analysis.per_device_step[1].first_bubble == 0);
}

TEST_CASE("several devices are analysed separately and summed", "[bubbles]")
{
    Scenario s;
    GpuInfoRow second;
    second.id = 1;
    second.name = "NVIDIA H100 80GB HBM3";
    s.add_gpu(second);
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(0, 100, 7, 0));
    s.launch(host, call(10, 20), kernel(50, 150, 9, 1));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "devices"), steps_of({ { 0, 200 } }));
    CHECK(analysis.devices == std::vector<uint32_t> { 0, 1 });
    REQUIRE(analysis.per_device.size() == 2);
    CHECK(analysis.per_device[0].totals.idle_ns == 100);
    CHECK(analysis.per_device[1].totals.idle_ns == 100);
    CHECK(analysis.per_device[1].totals.bubble_count == 2);
    CHECK(analysis.total.step_ns == 400);
    CHECK(analysis.total.bubble_ratio == Approx(0.5));
}

TEST_CASE("a trace with no loop is one step, and warm-up never removes it", "[bubbles][steps]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(20, 100));
    s.launch(host, call(10, 20), { .start_ns = 150, .end_ns = 250, .name = "other" });
    const TraceModel model = write_and_load(s, "single-step");
    const StepSet steps = find_steps(model, {});
    CHECK(steps.source == StepSource::WholeTrace);
    REQUIRE(steps.steps.size() == 1);
    CHECK(steps.warmup_excluded == 0);
    CHECK(steps.steps[0].start_ns == 0);
    CHECK(steps.steps[0].end_ns == 250);
    const BubbleAnalysis analysis = analyze(model, steps);
    CHECK(analysis.total.busy_ns == 180);
    CHECK(analysis.total.idle_ns == 70);
}

TEST_CASE("host-blocking calls are classified by name and copy kind", "[bubbles][host_blocking]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.sync(host, 0, 10, schema::SyncType::StreamSynchronize, 3, 0, "cuStreamSynchronize");
    s.sync(host, 10, 20, schema::SyncType::ContextSynchronize, std::nullopt, 0, "cudaDeviceSynchronize_v3020");
    s.sync(host, 20, 30, schema::SyncType::EventSynchronize, std::nullopt, 0, "cudaEventSynchronize_v3020");
    const CopySpec dtoh_pageable { .start_ns = 35,
        .end_ns = 38,
        .bytes = 8,
        .kind = schema::MemcpyKind::DtoH,
        .src_kind = schema::MemoryKind::Device,
        .dst_kind = schema::MemoryKind::Pageable,
        .stream_id = 5 };
    s.memcpy(host, call(30, 40, "cudaMemcpy_v3020"), dtoh_pageable);
    s.memcpy(host, call(40, 50, "cudaMemcpyAsync_v3020"), dtoh_pageable);
    s.memcpy(host, call(50, 60, "cudaMemcpyAsync_ptsz_v7000"), { .start_ns = 55, .end_ns = 58 }); // pinned
    s.memcpy(host, call(60, 70, "cudaMemcpy_v3020"),
        { .start_ns = 65, .end_ns = 68, .kind = schema::MemcpyKind::DtoD, .src_kind = schema::MemoryKind::Device });
    // cudaMemset blocks only on pinned host or managed memory (CUDA runtime API, "API synchronization behavior").
    s.memset(host, call(70, 80, "cudaMemset_v3020"),
        { .start_ns = 75, .end_ns = 78, .mem_kind = schema::MemoryKind::Managed });
    s.memset(host, call(72, 74, "cudaMemset_v3020"), { .start_ns = 76, .end_ns = 77 }); // device memory
    s.memset(host, call(80, 90, "cudaMemsetAsync_v3020"), { .start_ns = 85, .end_ns = 88 });
    s.api_call(host, call(90, 100, "cuMemcpyDtoH_v2"));
    s.api_call(host, call(100, 110, "cudaFree_v3020"));
    s.api_call(host, call(110, 120, "cudaStreamQuery_v3020"));
    s.launch(host, call(120, 130), kernel(130, 140));

    const auto calls = find_host_blocking_calls(write_and_load(s, "host-blocking"));
    REQUIRE(calls.size() == 8);
    const std::vector<HostBlockingKind> kinds { HostBlockingKind::StreamSync, HostBlockingKind::DeviceSync,
        HostBlockingKind::EventSync, HostBlockingKind::BlockingMemcpy, HostBlockingKind::PageableAsyncMemcpy,
        HostBlockingKind::BlockingMemset, HostBlockingKind::BlockingMemcpy, HostBlockingKind::Other };
    for (size_t i = 0; i < kinds.size(); ++i) {
        INFO("call " << i);
        CHECK(calls[i].kind == kinds[i]);
    }
    CHECK(calls[0].stream_id == uint32_t(3));
    CHECK(calls[0].device_id == uint32_t(0));
    CHECK(!calls[1].stream_id);
    CHECK(calls[3].stream_id == uint32_t(5));
    CHECK(calls[3].start_ns == 30);
    CHECK(calls[3].end_ns == 40);
    CHECK(!calls[6].device_id); // a driver copy with no copy row
}

TEST_CASE("the recorded sync sample: its host-blocking calls, and the bubbles after them are syncs",
    "[bubbles][host_blocking][samples]")
{
    const TraceModel model = load_recorded("h100-sample-syncs.sqlite");
    const auto calls = find_host_blocking_calls(model);
    std::array<int64_t, 7> per_kind {};
    for (const auto& c : calls)
        ++per_kind[size_t(c.kind)];
    // samples/cuda/syncs.cu: per step one stream, device and event sync, one blocking DtoH copy and one async DtoH
    // copy to pageable memory; once a cudaFree after the loop. Its cudaMemset before the loop writes device memory,
    // so it does not block the host.
    CHECK(per_kind[size_t(HostBlockingKind::StreamSync)] == 20);
    CHECK(per_kind[size_t(HostBlockingKind::DeviceSync)] == 20);
    CHECK(per_kind[size_t(HostBlockingKind::EventSync)] == 20);
    CHECK(per_kind[size_t(HostBlockingKind::BlockingMemcpy)] == 20);
    CHECK(per_kind[size_t(HostBlockingKind::PageableAsyncMemcpy)] == 20);
    CHECK(per_kind[size_t(HostBlockingKind::BlockingMemset)] == 0);
    CHECK(per_kind[size_t(HostBlockingKind::Other)] == 1);
    for (const auto& c : calls)
        if (c.kind != HostBlockingKind::Other)
            CHECK(c.device_id == uint32_t(0));

    const StepSet steps = find_steps(model, {});
    REQUIRE(steps.source == StepSource::Nvtx);
    const BubbleAnalysis analysis = analyze_bubbles(model, steps, calls);
    CHECK(analysis.devices == std::vector<uint32_t> { 0 });
    CHECK(analysis.epsilon_samples == int64_t(model.kernels.size() + model.memcpys.size() + model.memsets.size()));
    // Every bubble in which a sync on the launching thread returned is charged to a sync.
    int64_t checked = 0;
    for (const auto& c : calls) {
        for (const Bubble& bubble : analysis.bubbles)
            if (bubble.start_ns <= c.end_ns && c.end_ns <= bubble.end_ns && bubble.next_api_index
                && model.api_calls.global_tid[*bubble.next_api_index] == c.global_tid) {
                CHECK(bubble.cause == BubbleCause::Sync);
                ++checked;
            }
    }
    CHECK(checked >= 18 * 4);
    CHECK(analysis.total.cause_ns[size_t(BubbleCause::Sync)] > analysis.total.idle_ns / 2);
    CHECK(analysis.total.busy_ns + analysis.total.idle_ns == analysis.total.step_ns);
}
