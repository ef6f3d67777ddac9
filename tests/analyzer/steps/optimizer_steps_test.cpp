// Steps from the optimizer (docs/analysis.md "Steps", source `optimizer`, issue 42): a PyTorch loop recorded by
// `fp8scope record` with no marker of its own. Each iteration loads its batch, runs a GEMM and the optimizer's
// kernel, then reads its loss (.item(): a copy kernel and a stream sync) and sleeps 778 us at the loop's top, as a
// data loader would. The optimizer hook marks each update's end on the host, long before the GPU gets there.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr int64_t kSteps = 6;
constexpr int64_t kStepNs = 1'000'000;
constexpr int64_t kFirstNs = 500'000;

int64_t base_of(int64_t i)
{
    return kFirstNs + kStepNs * i;
}

KernelSpec kernel(int64_t start_ns, int64_t end_ns, std::string name)
{
    return { .start_ns = start_ns, .end_ns = end_ns, .name = std::move(name) };
}

ApiSpec call(int64_t at_ns)
{
    return { .api_start_ns = at_ns, .api_end_ns = at_ns + 1'000 };
}

// `skipped`: GradScaler skipped this step's update (the hook writes optimizer_skipped); `job_markers`: the job marks
// its steps itself too; `nvtx`: it opens a train_step range at each loop top.
Scenario optimizer_loop(std::optional<int64_t> skipped = {}, bool job_markers = false, bool nvtx = false)
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    for (int64_t i = 0; i < kSteps; ++i) {
        const int64_t b = base_of(i);
        if (job_markers)
            s.step_marker(host, b - 1'000, 100 + i);
        if (nvtx)
            s.nvtx_range(host, b - 1'000, b + 300'000, "train_step");
        s.launch(host, call(b), kernel(b + 2'000, b + 6'000, "load_batch"));
        s.launch(host, call(b + 10'000), kernel(b + 12'000, b + 200'000, "sm90_xmma_gemm_bf16bf16_bf16f32"));
        s.launch(host, call(b + 30'000),
            kernel(b + 200'000, b + 220'000, "multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor>"));
        s.optimizer_step(host, b + 40'000, i, skipped == i); // the update's end, on the host
        s.launch(host, call(b + 45'000), kernel(b + 220'000, b + 221'000, "item_copy"));
        s.sync(host, b + 47'000, b + 222'000, schema::SyncType::StreamSynchronize, 7);
        // then the thread sleeps until the next iteration's top: 778 us
    }
    return s;
}

StepOptions all_steps()
{
    StepOptions options;
    options.warmup = 0;
    return options;
}

} // namespace

TEST_CASE("optimizer steps: each ends with its update, the next begins at the loop thread's longest pause",
    "[steps][optimizer]")
{
    const TraceModel model = write_and_load(optimizer_loop(), "optimizer-steps");
    const StepSet steps = find_steps(model, all_steps());
    CHECK(steps.source == StepSource::Optimizer);
    CHECK(std::string(step_source_name(steps.source)) == "optimizer");
    INFO(steps.detail);
    REQUIRE(steps.steps.size() == size_t(kSteps));
    for (int64_t i = 0; i < kSteps; ++i) {
        INFO("step " << i);
        const StepInterval& step = steps.steps[size_t(i)];
        CHECK(step.index == i);
        CHECK(step.host_start_ns == base_of(i)); // the load after the sleep, not the .item() after the update
        CHECK(step.start_ns == base_of(i)); // the GPU was idle there
        // The last step ends when the device is done with the work launched before its update's end.
        CHECK(step.end_ns == (i + 1 < kSteps ? base_of(i + 1) : base_of(i) + 220'000));
    }
    // Markers ignored (--step-source auto): the optimizer's markers too.
    StepOptions automatic = all_steps();
    automatic.ignore_markers = automatic.ignore_nvtx = true;
    CHECK(find_steps(model, automatic).source != StepSource::Optimizer);
}

TEST_CASE(
    "optimizer steps: the sleep after the update is host work between steps, not in the step", "[steps][optimizer]")
{
    const Report r = analyze(write_and_load(optimizer_loop(), "optimizer-sleep"));
    REQUIRE(r.steps.source == StepSource::Optimizer);
    REQUIRE(r.steps.steps.size() == size_t(kSteps - 2)); // the default warm-up of 2
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        if (row.step_index == kSteps - 1)
            continue; // the last step ends at its update: no sleep after it
        INFO("step " << row.step_index);
        CHECK(row.totals.cause_ns[size_t(BubbleCause::Host)] == 778'000); // from the sync's return to the next load
        CHECK(row.totals.host_in_launches_ns == 0);
    }
    const WhatIf w = estimate_what_if(r);
    REQUIRE(!w.recommendations.empty());
    CHECK(w.recommendations.front().kind == RecommendationKind::ReduceHostWork);
}

TEST_CASE("optimizer steps: a skipped update is still a step and is named, the job's markers and NVTX win",
    "[steps][optimizer]")
{
    const StepSet skipped = find_steps(write_and_load(optimizer_loop(3), "optimizer-skipped"), all_steps());
    CHECK(skipped.source == StepSource::Optimizer);
    CHECK(skipped.steps.size() == size_t(kSteps));
    CHECK_THAT(skipped.detail, Catch::Contains("GradScaler skipped the update of step 3"));

    const StepSet marked = find_steps(write_and_load(optimizer_loop({}, true), "optimizer-marked"), all_steps());
    CHECK(marked.source == StepSource::Markers);
    CHECK(marked.steps.front().index == 100);

    const StepSet nvtx = find_steps(write_and_load(optimizer_loop({}, false, true), "optimizer-nvtx"), all_steps());
    CHECK(nvtx.source == StepSource::Nvtx);
}
