// Bubbles (docs/analysis.md "Bubbles") at the steps' edges, rule 4 (collectives in multi-rank runs), and the recorded
// launch_bound and host_stall samples against what they printed. The rules 1 to 3 are in bubbles_test.cpp.
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

TEST_CASE("a gap is classified whole, even where it ends after the steps", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 5), kernel(10, 100)); // latency 5
    s.launch(host, call(20, 30), kernel(300, 400)); // 270: submitted long before the gap began at 100
    s.launch(host, call(390, 395), kernel(400, 450)); // 5
    const BubbleAnalysis analysis = analyze(write_and_load(s, "gap-after-steps"), steps_of({ { 10, 200 } }));
    CHECK(analysis.epsilon_ns == 5);
    check_bubbles(analysis, { { 100, 200, BubbleCause::Dependency } });
    CHECK(analysis.bubbles[0].next_api_index.has_value());
}

TEST_CASE("a device busy only outside the steps is not reported", "[bubbles]")
{
    Scenario s;
    GpuInfoRow second;
    second.id = 1;
    s.add_gpu(second);
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 5), kernel(10, 50, 7, 1)); // device 1, before the steps (warm-up)
    s.launch(host, call(5, 10), kernel(100, 150, 7, 0));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "device-outside"), steps_of({ { 100, 200 } }));
    CHECK(analysis.devices == std::vector<uint32_t> { 0 });
    REQUIRE(analysis.per_device_step.size() == 1);
    CHECK(analysis.per_device_step[0].totals.idle_ns == 50);
    CHECK(analysis.total.cause_ns[size_t(BubbleCause::Comm)] == 0);
}

TEST_CASE("no steps: nothing is reported", "[bubbles]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 5), kernel(10, 50));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "no-steps"), StepSet {});
    CHECK(analysis.devices.empty());
    CHECK(analysis.bubbles.empty());
    CHECK(analysis.total.step_ns == 0);
    CHECK(analysis.total.bubble_ratio == 0.0);
    CHECK(analysis.epsilon_ns == 5);
}

TEST_CASE("the recorded launch_bound sample: its tiny-kernel phase is launch-bound, its long-kernel phase busy",
    "[bubbles][samples]")
{
    // samples/cuda/launch_bound.cu: 4 steps of thousands of tiny kernels (the GPU waits for each launch), then 4
    // steps of a few long kernels (the GPU is busy), recorded on an H100.
    auto model = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/h100-sample-launch-bound.sqlite");
    REQUIRE(model);
    StepOptions options;
    options.warmup = 0;
    const StepSet steps = find_steps(*model, options);
    REQUIRE(steps.steps.size() == 8);
    const BubbleAnalysis analysis = analyze_bubbles(*model, steps, find_host_blocking_calls(*model));
    REQUIRE(analysis.per_device_step.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
        const BubbleTotals& t = analysis.per_device_step[i].totals;
        INFO("step " << i);
        if (i < 4) {
            CHECK(t.bubble_ratio > 0.5);
            const int64_t launch = t.cause_ns[static_cast<size_t>(BubbleCause::Launch)];
            CHECK(launch > t.idle_ns * 9 / 10); // the launch path is the bottleneck
        } else {
            CHECK(t.bubble_ratio < 0.05);
        }
    }
}

TEST_CASE("rule 4: in a multi-rank run, a gap filled by a collective is comm, and the collective is not busy time",
    "[bubbles]")
{
    // Compute [0, 100) on stream 7; an all-reduce on stream 9 runs [100, 400) while compute waits for it (the
    // next compute kernel was launched long before, at 20); then compute [400, 500). A second collective
    // [520, 560) overlaps a compute kernel [500, 600) and hides nothing.
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(0, 10), kernel(30, 100));
    KernelSpec allreduce = kernel(100, 400, 9);
    allreduce.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    s.launch(host, call(12, 18), allreduce);
    s.launch(host, call(20, 28), kernel(400, 500));
    s.launch(host, call(30, 38), kernel(500, 600));
    KernelSpec overlapped = allreduce;
    overlapped.start_ns = 520;
    overlapped.end_ns = 560;
    s.launch(host, call(40, 48), overlapped);
    const BubbleAnalysis analysis = analyze(write_and_load(s, "comm"), steps_of({ { 0, 600 } }));
    CHECK(analysis.multi_rank);
    // [0, 30): launch-bound; [100, 400): the collective covers all of it.
    check_bubbles(analysis, { { 0, 30, BubbleCause::Launch }, { 100, 400, BubbleCause::Comm } });
    const BubbleTotals& totals = analysis.total;
    CHECK(totals.busy_ns == 270);
    CHECK(totals.idle_ns == 330);
    CHECK(cause_ns(totals, BubbleCause::Comm) == 300);
}

TEST_CASE("rule 4: a gap a collective covers for half or less is split at its cover", "[bubbles][issue27]")
{
    // Compute [20, 100 us) from 8 launches 5 us apart (the thread's median silence: the stall threshold is 100 us);
    // the thread is silent for 600 us (a data loader: a host stall), then launches an all-reduce that runs
    // [700, 1000 us) on stream 9 and the next compute kernel, which waits for it: [1000, 1100 us). The gap
    // [100, 1000 us) is a third collective, two thirds host stall. Before: host whole (900 us); now comm 300 us and
    // host 600 us (the stretch before the collective, ended by its start).
    Scenario s;
    const auto host = s.thread(4242, 4242);
    for (int64_t k = 0; k < 8; ++k)
        s.launch(host, call(k * 5'000, k * 5'000 + 2'000), kernel(20'000 + k * 10'000, 30'000 + k * 10'000));
    KernelSpec allreduce = kernel(700'000, 1'000'000, 9);
    allreduce.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    s.launch(host, call(690'000, 695'000), allreduce);
    s.launch(host, call(696'000, 699'000), kernel(1'000'000, 1'100'000));
    const BubbleAnalysis analysis = analyze(write_and_load(s, "comm-split"), steps_of({ { 0, 1'100'000 } }));
    CHECK(analysis.multi_rank);
    check_bubbles(analysis,
        { { 0, 20'000, BubbleCause::Launch }, { 100'000, 700'000, BubbleCause::Host },
            { 700'000, 1'000'000, BubbleCause::Comm } });
    CHECK(cause_ns(analysis.total, BubbleCause::Comm) == 300'000);
    CHECK(cause_ns(analysis.total, BubbleCause::Host) == 600'000);
}

TEST_CASE("rule 4: single-rank runs have no comm cause and no communication kernels", "[bubbles]")
{
    const BubbleAnalysis analysis = analyze(write_and_load(sync_scenario(), "single-rank"), steps_of({ { 0, 500 } }));
    CHECK_FALSE(analysis.multi_rank);
    CHECK(cause_ns(analysis.total, BubbleCause::Comm) == 0);
}

TEST_CASE("the recorded host_stall sample: the host-caused idle time per step is the printed stall within 5%",
    "[bubbles][samples]")
{
    // samples/cuda/host_stall.cu, 12 steps: per step 4 kernels of 100 us, a 20 ms host busy-wait with no CUDA
    // call, 4 more kernels, a stream sync. The program printed each stall's length (samples/traces/README.md);
    // all 12 were 20.000 ms within 0.2 us.
    auto model = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/h200-sample-host-stall.sqlite");
    REQUIRE(model);
    StepOptions options;
    options.warmup = 0;
    const StepSet steps = find_steps(*model, options);
    REQUIRE(steps.steps.size() == 12);
    const BubbleAnalysis analysis = analyze(*model, steps);
    REQUIRE(analysis.per_device_step.size() == 12);
    constexpr double kStallNs = 20'000'000;
    for (size_t i = 0; i < 12; ++i) {
        INFO("step " << i);
        const int64_t host_ns = cause_ns(analysis.per_device_step[i].totals, BubbleCause::Host);
        CHECK(std::abs(double(host_ns) - kStallNs) <= 0.05 * kStallNs);
    }
}
