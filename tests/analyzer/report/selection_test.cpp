// What the analyzer decides for the gate (docs/analysis.md "Selections", "Budgets"): a --device, --steps or --warmup
// that leaves nothing is an empty selection naming what exists; the default warm-up is clamped and says so; a
// budget with nothing to judge fails with the reason. And what reports show: one API name per API (the version and
// per-thread suffixes dropped), kernel-class shares of kernel time that never exceed 1, the recording's state.
#include "analysis_test_support.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/present/selection_wording.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using fp8scope::testing::HostThread;
using fp8scope::testing::Scenario;
using fp8scope::testing::write_and_load;

namespace {

// Five NVTX steps "train_step 0..4" of 1000 ns on device 0, each with one launch and one kernel of 400 ns.
Scenario five_steps()
{
    Scenario s;
    const HostThread host = s.thread(s.session().pid, 11);
    for (int64_t i = 0; i < 5; ++i) {
        const int64_t t = i * 1000;
        s.nvtx_range(host, t, t + 1000, "train_step " + std::to_string(i));
        s.launch(host, { .api_start_ns = t + 10, .api_end_ns = t + 20 },
            { .start_ns = t + 100, .end_ns = t + 500, .name = "gemm" });
    }
    return s;
}

Report analyse(const TraceModel& model, ReportOptions options = {})
{
    return analyze(model, options);
}

// --steps FIRST:LAST (either open) and --device, as the CLI would fill them.
ReportOptions selected(
    std::optional<int64_t> first, std::optional<int64_t> last, std::optional<uint32_t> device = std::nullopt)
{
    ReportOptions options;
    options.first_step = first;
    options.last_step = last;
    options.device = device;
    return options;
}

} // namespace

TEST_CASE("a selection that leaves nothing says why and names what exists", "[selection]")
{
    const TraceModel model = write_and_load(five_steps(), "selection-five");
    SECTION("a device without activity")
    {
        const Report r = analyse(model, selected({}, {}, 99));
        REQUIRE(r.selection.empty);
        CHECK(r.selection.empty->reason == EmptySelection::Reason::NoSuchDevice);
        CHECK(r.selection.empty->device == 99);
        CHECK(present::empty_selection_text(r.selection)
            == "--device 99: no device 99 with GPU activity in the analysed steps; devices: 0");
    }
    SECTION("a step range past the end")
    {
        const Report r = analyse(model, selected(500, 600));
        REQUIRE(r.selection.empty);
        CHECK(r.selection.empty->reason == EmptySelection::Reason::StepsSelectNone);
        CHECK(r.selection.empty->first_step == 500);
        CHECK(present::empty_selection_text(r.selection) == "--steps 500:600 selects none of steps 2–4");
        // Before the first step left after warm-up: the warm-up took them, and --warmup 0 gives them back.
        const Report open = analyse(model, selected({}, 1));
        REQUIRE(open.selection.empty);
        CHECK(open.selection.empty->reason == EmptySelection::Reason::StepsInWarmup);
        CHECK(open.selection.empty->warmup_excluded == 2);
        CHECK(present::empty_selection_text(open.selection)
            == "--steps :1 falls in the warm-up: the first 2 steps are left out as warm-up (the steps left start at "
               "2); "
               "add --warmup 0 to analyse them");
    }
    SECTION("a warm-up the user chose that leaves no step")
    {
        ReportOptions options;
        options.steps.warmup = 5;
        options.warmup_given = true;
        CHECK(present::empty_selection_text(analyse(model, options).selection)
            == "--warmup 5 leaves no step: the trace has 5 steps (nvtx); use --warmup 4 or less");
        options.steps.warmup = 4; // leaves one
        const Report one = analyse(model, options);
        CHECK_FALSE(one.selection.empty);
        CHECK(one.steps.steps.size() == 1);
        CHECK_FALSE(one.selection.warmup_clamped);
    }
    SECTION("a selection that keeps something is not empty")
    {
        const Report r = analyse(model, selected(3, 600, 0));
        CHECK_FALSE(r.selection.empty);
        CHECK(r.steps.steps.size() == 2);
        CHECK(r.selection.first_step == 2); // what --steps could select from
        CHECK(r.selection.last_step == 4);
        CHECK(r.selection.steps_found == 5);
        CHECK(r.selection.devices == std::vector<uint32_t> { 0 });
    }
}

TEST_CASE("the default warm-up is clamped to keep one step, and the report says it was", "[selection]")
{
    Scenario s;
    const HostThread host = s.thread(s.session().pid, 11);
    for (int64_t i = 0; i < 2; ++i) {
        s.nvtx_range(host, i * 1000, i * 1000 + 1000, "train_step");
        s.launch(host, { .api_start_ns = i * 1000, .api_end_ns = i * 1000 + 5 },
            { .start_ns = i * 1000 + 10, .end_ns = i * 1000 + 600 });
    }
    const TraceModel model = write_and_load(s, "selection-two");
    const Report r = analyse(model);
    CHECK_FALSE(r.selection.empty);
    CHECK(r.selection.warmup_clamped);
    CHECK(r.selection.warmup_requested == 2);
    CHECK(r.steps.warmup_excluded == 1);
    CHECK(r.steps.steps.size() == 1);
}

TEST_CASE("a trace without activity has no steps and no empty selection to report", "[selection]")
{
    const TraceModel model = write_and_load(Scenario {}, "selection-nothing");
    const Report r = analyse(model);
    CHECK(r.steps.steps.empty());
    CHECK_FALSE(r.selection.empty);
    CHECK_FALSE(r.selection.warmup_clamped);
    // --device still names what exists: nothing.
    CHECK(present::empty_selection_text(analyse(model, selected({}, {}, 0)).selection)
        == "--device 0: no device 0 with GPU activity in the analysed steps; devices: none");
}

TEST_CASE("a timeline budget with nothing to judge fails with the reason", "[budgets][selection]")
{
    Budgets all;
    all.max_bubble_ratio = 1.0;
    all.max_syncs_per_step = 100.0;
    all.max_launch_bound_ratio = 1.0;
    SECTION("no activity at all")
    {
        const Report r = analyse(write_and_load(Scenario {}, "budget-nothing"));
        for (const BudgetResult& b : evaluate_budgets(r, all)) {
            INFO(b.name);
            CHECK_FALSE(b.passed);
            CHECK(b.unavailable == "the trace has no steps (no GPU activity or NVTX ranges to analyse)");
        }
    }
    SECTION("steps from NVTX but no kernel, copy or memset")
    {
        Scenario s;
        const HostThread host = s.thread(s.session().pid, 11);
        for (int64_t i = 0; i < 3; ++i)
            s.nvtx_range(host, i * 1000, i * 1000 + 1000, "train_step");
        s.api_call(host, { .api_start_ns = 10, .api_end_ns = 20, .name = "cudaMalloc_v3020" });
        const auto results = evaluate_budgets(analyse(write_and_load(s, "budget-no-kernels")), all);
        REQUIRE(results.size() == 3);
        CHECK(results[0].name == "max-bubble-ratio");
        CHECK_FALSE(results[0].passed);
        CHECK(results[0].unavailable == "no GPU activity in the analysed steps");
        CHECK_FALSE(results[1].passed);
        CHECK(results[1].unavailable == "no GPU activity in the analysed steps");
        CHECK(results[2].name == "max-syncs-per-step"); // steps and API calls: 0 syncs is a figure
        CHECK(results[2].passed);
        CHECK(results[2].unavailable.empty());
    }
    SECTION("kernels but no CUDA API calls (an export made without API tracing)")
    {
        Scenario s;
        for (int64_t i = 0; i < 4; ++i)
            s.orphan_kernel({ .start_ns = i * 1000, .end_ns = i * 1000 + 300 });
        const auto results = evaluate_budgets(analyse(write_and_load(s, "budget-no-api")), all);
        CHECK(results[0].passed); // the bubble ratio needs the GPU side only
        CHECK(results[0].unavailable.empty());
        for (size_t i : { 1, 2 }) {
            INFO(results[i].name);
            CHECK_FALSE(results[i].passed);
            CHECK(results[i].unavailable == "the trace has no CUDA API calls (no launch or sync to judge)");
        }
    }
}

TEST_CASE("the recording's state reaches the report", "[selection]")
{
    Scenario s = five_steps();
    s.dropped({ .timestamp_ns = 10, .source = schema::DropSource::CuptiNoBuffer, .count = 7, .device_id = {} });
    const std::string dir = std::string(FP8SCOPE_TEST_TMP) + "/steps-bubbles";
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/selection-unfinished.sqlite";
    std::filesystem::remove(path);
    REQUIRE(s.write_fp8scope(path, /*finished=*/false));
    const auto model = load_trace(path);
    REQUIRE(model);
    const Report r = analyze(*model);
    CHECK_FALSE(r.recording.finished);
    CHECK(r.recording.dropped_records == 7);
    CHECK(r.recording.api_calls == 5);
}

TEST_CASE("API base names drop the version and per-thread suffixes, and one API is one sync row", "[syncs][selection]")
{
    CHECK(api_base_name("cudaStreamSynchronize_v3020") == "cudaStreamSynchronize");
    CHECK(api_base_name("cudaMemcpyAsync_ptsz_v7000") == "cudaMemcpyAsync");
    CHECK(api_base_name("cuMemcpyDtoH_v2") == "cuMemcpyDtoH");
    CHECK(api_base_name("cudaMemcpy_ptds") == "cudaMemcpy");
    CHECK(api_base_name("cudaLaunchKernel") == "cudaLaunchKernel");
    CHECK(api_base_name("_v2") == "_v2"); // nothing left to call: unchanged

    Scenario s = five_steps();
    const HostThread host = s.thread(s.session().pid, 11);
    s.sync(host, 2600, 2700, schema::SyncType::StreamSynchronize, 7u, 0, "cudaStreamSynchronize_v3020");
    s.sync(host, 3600, 3700, schema::SyncType::StreamSynchronize, 7u, 0, "cudaStreamSynchronize_ptsz_v7000");
    const TraceModel model = write_and_load(s, "selection-api-names");
    const Report r = analyse(model);
    REQUIRE(r.syncs.by_api.size() == 1);
    CHECK(r.syncs.by_api[0].name == "cudaStreamSynchronize");
    CHECK(r.syncs.by_api[0].count == 2);
}

TEST_CASE(
    "kernel-class shares are of kernel time: never above 1 with concurrent streams", "[kernel_classes][selection]")
{
    Scenario s;
    const HostThread host = s.thread(s.session().pid, 11);
    s.nvtx_range(host, 0, 1000, "train_step");
    // Three streams each busy for 900 of the step's 1000 ns: 2700 ns of kernel time in a 1000 ns step.
    s.launch(host, { .api_start_ns = 0, .api_end_ns = 5 },
        { .start_ns = 50, .end_ns = 950, .name = "sm90_xmma_gemm_e4m3e4m3", .stream_id = 1 });
    for (uint32_t stream : { 2u, 3u })
        s.launch(host, { .api_start_ns = 5 + stream, .api_end_ns = 6 + stream },
            { .start_ns = 60, .end_ns = 960, .name = "cast_fp8_kernel", .stream_id = stream });
    ReportOptions options;
    options.steps.warmup = 0;
    const Report r = analyse(write_and_load(s, "selection-concurrent"), options);
    CHECK(r.kernel_classes.share(KernelClass::Fp8Gemm) + r.kernel_classes.share(KernelClass::Cast) == Approx(2.7));
    CHECK(r.kernel_classes.share_of_kernel_time(KernelClass::Fp8Gemm) == Approx(1.0 / 3.0));
    CHECK(r.kernel_classes.share_of_kernel_time(KernelClass::Cast) == Approx(2.0 / 3.0));
    // 1800 ns of casts in a 1000 ns step: fusing them can give back at most the step.
    const WhatIf w = estimate_what_if(r);
    const auto fuse = std::ranges::find_if(w.recommendations,
        [](const Recommendation& rec) { return rec.kind == RecommendationKind::FuseFp8Bookkeeping; });
    REQUIRE(fuse != w.recommendations.end());
    CHECK(fuse->saving_per_step_ns == 1000);
    CHECK(fuse->saving_share == 1.0);
    REQUIRE(fuse->worst_step);
    CHECK(fuse->worst_step->share == 1.0);
}
