// Rules that real jobs called for, on synthetic traces with exact answers: launch against host (rule 3,
// docs/analysis.md "Causes of bubbles"), the CUDA Graphs estimate, steps from graph launches, steps aligned to the
// optimizer, and a trailing partial repetition.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

StepOptions no_warmup()
{
    StepOptions options;
    options.warmup = 0;
    return options;
}

// Automatic detection (markers and NVTX absent) finds exactly these step starts.
void check_automatic_starts(const TraceModel& model, const std::vector<int64_t>& starts)
{
    const StepSet steps = find_steps(model, no_warmup());
    CAPTURE(steps.detail);
    CHECK(steps.source == StepSource::Automatic);
    REQUIRE(steps.steps.size() == starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
        CHECK(steps.steps[i].start_ns == starts[i]);
}

int64_t cause_ns(const Report& r, BubbleCause cause)
{
    return r.totals.cause_ns[size_t(cause)];
}

} // namespace

TEST_CASE("framework dispatch between launches is launch, a silent thread is host", "[bubbles][rule3]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    s.step_marker(t, 0, 0);
    // 20 ops: the launch call takes 2 us, the framework's dispatch 8 us outside CUDA, the kernel 1 us. The GPU idles
    // ~9 us between kernels while the thread is busy: 20% of the gap in CUDA calls, which the old rule called host.
    int64_t at = 1'000;
    for (int i = 0; i < 20; ++i) {
        s.launch(t, { at, at + 2'000 }, { at + 3'000, at + 4'000, "tiny_kernel" });
        at += 10'000;
    }
    // Then the data loader sleeps 5 ms with no CUDA call, and the next step starts.
    const int64_t after_sleep = at + 5'000'000;
    s.step_marker(t, after_sleep, 1);
    for (int i = 0; i < 20; ++i) {
        const int64_t t0 = after_sleep + int64_t(i) * 10'000;
        s.launch(t, { t0, t0 + 2'000 }, { t0 + 3'000, t0 + 4'000, "tiny_kernel" });
    }
    const TraceModel model = write_and_load(s, "rule3-dispatch-and-stall");
    ReportOptions options;
    options.steps.warmup = 0;
    const Report r = analyze(model, options);
    // The thread's median silence between calls is 8 us, so its stall threshold is max(100 us, 20 x 8 us).
    CHECK(r.bubbles.host_stall_median_silence_ns == 8'000);
    CHECK(r.bubbles.host_stall_threshold_ns == 160'000);
    REQUIRE(r.steps.steps.size() == 2);
    const BubbleTotals& step0 = r.bubbles.per_device_step[0].totals;
    // Step 0: 4 us before the first kernel, 19 gaps of 9 us between kernels: launch; then the 5 ms stall up to
    // the next step's marker: host.
    CHECK(step0.cause_ns[size_t(BubbleCause::Launch)] == 4'000 + 19 * 9'000);
    CHECK(step0.cause_ns[size_t(BubbleCause::Host)] == after_sleep - (at - 10'000 + 4'000));
    CHECK(cause_ns(r, BubbleCause::Host) > cause_ns(r, BubbleCause::Launch));
}

TEST_CASE("the CUDA Graphs estimate shrinks launch gaps to the graph gap and overlaps a stall without a sync",
    "[whatif][rule3]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    // Three steps of 10 kernels of 20 us, launched every 100 us (80 us of launch idle each), after a 2 ms stall.
    int64_t at = 0;
    for (int step = 0; step < 3; ++step) {
        s.step_marker(t, at, step);
        at += 2'000'000;
        for (int i = 0; i < 10; ++i) {
            s.launch(t, { at, at + 5'000 }, { at + 10'000, at + 30'000, "k" });
            at += 100'000;
        }
    }
    const TraceModel model = write_and_load(s, "whatif-overlap");
    ReportOptions options;
    options.steps.warmup = 0;
    const Report r = analyze(model, options);
    REQUIRE(r.steps.steps.size() == 3);
    CHECK(r.bubbles.graph_gap_samples == 0);
    CHECK(r.bubbles.graph_gap_ns == kDefaultGraphKernelGapNs);
    // A full step (3 ms: 2 ms stall + 1 ms of launches): GPU time 10 x 20 us plus 10 residual graph gaps is far
    // below the 2 ms stall, so with graphs the step takes the stall (plus its first 10 us before the first
    // kernel, host too): max(host, rest).
    const BubbleTotals& step0 = r.bubbles.per_device_step[0].totals;
    const int64_t host = step0.cause_ns[size_t(BubbleCause::Host)];
    CHECK(host >= 2'000'000);
    const WhatIf w = estimate_what_if(r);
    CHECK(w.without_launch_overhead_ns >= 2'000'000);
    CHECK(w.without_launch_overhead_ns < w.mean_step_ns);
}

TEST_CASE("a job that launches one CUDA graph per step gets one step per launch", "[steps][graphs]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    // Eager warm-up iterations before capture (the same kernels, not graph launches), then 6 replays.
    int64_t at = 0;
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 5; ++k, at += 10'000)
            s.launch(t, { at, at + 2'000 }, { at + 3'000, at + 8'000, "k" + std::to_string(k) });
    std::vector<int64_t> starts;
    for (int step = 0; step < 6; ++step) {
        at += 500'000;
        const uint32_t id = s.launch(t, { at, at + 20'000, "cudaGraphLaunch_v10000" },
            { .start_ns = at + 25'000, .end_ns = at + 30'000, .name = "k0", .graph_id = 7 });
        starts.push_back(at + 25'000);
        for (int k = 1; k < 5; ++k)
            s.more_of(id,
                { .start_ns = at + 25'000 + k * 6'000,
                    .end_ns = at + 30'000 + k * 6'000,
                    .name = "k" + std::to_string(k),
                    .graph_id = 7 });
    }
    // A trailing eager kernel after the last replay is not a step of its own.
    s.launch(t, { at + 100'000, at + 101'000 }, { at + 102'000, at + 103'000, "k0" });
    check_automatic_starts(write_and_load(s, "graph-steps"), starts);
}

TEST_CASE("automatic steps begin after the optimizer, where the thread paused, a partial last one is dropped",
    "[steps][optimizer]")
{
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 0;
    auto op = [&](const std::string& name, int64_t pause_ns) {
        at += pause_ns;
        s.launch(t, { at, at + 2'000 }, { at + 3'000, at + 5'000, name });
        at += 5'000;
    };
    for (int i = 0; i < 4; ++i)
        op("init_kernel_" + std::to_string(i), 1'000); // the prologue
    std::vector<int64_t> starts;
    for (int step = 0; step < 6; ++step) {
        starts.push_back(at + 200'000 + 3'000);
        op("sm90_xmma_gemm_bf16_fwd", 200'000); // the data loader's pause, then the forward GEMM
        op("elementwise_act", 1'000);
        op("sm90_xmma_gemm_bf16_dgrad", 1'000);
        op("sm90_xmma_gemm_bf16_wgrad", 1'000);
        op("void at::native::multi_tensor_apply_kernel<adam>", 30'000); // optimizer.step(): Python, then kernels
        op("void at::native::multi_tensor_apply_kernel<adam>", 1'000);
        op("copy_loss_kernel", 1'000); // losses[step].copy_(loss)
    }
    op("sm90_xmma_gemm_bf16_fwd", 200'000); // the trace ends inside the 7th step
    op("elementwise_act", 1'000);
    check_automatic_starts(write_and_load(s, "optimizer-phase"), starts);
}
