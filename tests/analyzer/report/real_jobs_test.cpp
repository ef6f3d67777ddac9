// Real jobs nobody wrote for fp8scope (docs/analysis.md "Steps"; samples/traces/realjobs/, recorded on an H100 by
// tests/gpu/check_realjobs.py). Each job marked its steps with fp8scope.step(i) and printed what it did; the
// truth is that print (.truth.json) and those markers. Automatic detection runs with markers and NVTX hidden.
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "job_truth.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

const std::string kDir = std::string(FP8SCOPE_SAMPLE_TRACES) + "/realjobs/";

TraceModel load_job(const std::string& name)
{
    auto model = load_trace(kDir + name + ".sqlite");
    REQUIRE(model);
    return std::move(*model);
}

nlohmann::json truth_of(const std::string& name)
{
    std::ifstream in(kDir + name + ".truth.json");
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

} // namespace

TEST_CASE("automatic steps on real jobs give the exact step count and every boundary within one activity",
    "[steps][realjobs]")
{
    // Every boundary is checked, except the first step's two where that step did work no later step repeats:
    // torch.compile's and XLA's compilation and autotuning (the truth's step 0 begins with them, the detected one
    // with the first forward) and DDP's first iteration (gloo's first copies); docs/analysis.md, "Steps".
    const auto job = GENERATE(as<std::string> {}, "h100-hf-llama", "h100-train-fp8-stats", "h100-compile-block",
        "h100-ddp-gloo-rank0", "h100-ddp-gloo-rank1", "h100-graph-step", "h100-jax-mlp", "h100-whatif-fp8-sample-eager",
        "h100-whatif-host-stall-eager");
    CAPTURE(job);
    const TraceModel model = load_job(job);
    const nlohmann::json truth = truth_of(job);
    REQUIRE(int64_t(model.step_markers.size()) == truth.at("steps").get<int64_t>());

    StepOptions options;
    options.ignore_markers = true;
    options.ignore_nvtx = true;
    options.warmup = 0;
    const StepSet steps = find_steps(model, options);
    CAPTURE(steps.detail);
    CHECK(steps.source == StepSource::Automatic);
    REQUIRE(int64_t(steps.steps.size()) == truth.at("steps").get<int64_t>());

    const JobActivities a = job_activities(model);
    std::vector<int64_t> marker_ns;
    for (const StepMarker& marker : model.step_markers)
        marker_ns.push_back(marker.timestamp_ns);
    const std::vector<size_t> truth_positions = true_boundaries(a, marker_ns);
    const bool first_step_differs
        = job == "h100-compile-block" || job == "h100-jax-mlp" || job.starts_with("h100-ddp-gloo");
    for (size_t i = first_step_differs ? 2 : 0; i < steps.steps.size(); ++i) {
        const int64_t found = int64_t(position_of(a, steps.steps[i].start_ns));
        CAPTURE(i, found, truth_positions[i]);
        CHECK(std::abs(found - int64_t(truth_positions[i])) <= 1);
    }
}

TEST_CASE("the CUDA-graph estimate of a traced eager step is within 20% of the same step replayed from a graph",
    "[whatif][realjobs]")
{
    // whatif.py measured the step untraced, eager and captured in a CUDA graph, in the same GPU call.
    const auto job = GENERATE(as<std::string> {}, "h100-whatif-fp8-sample-eager", "h100-whatif-host-stall-eager");
    CAPTURE(job);
    const TraceModel model = load_job(job);
    const nlohmann::json truth = truth_of(job);
    ReportOptions options;
    options.steps.warmup = truth.at("warmup").get<int>();
    const Report report = analyze(model, options);
    const WhatIf w = estimate_what_if(report);
    const double predicted_ms = double(w.without_launch_overhead_ns) / 1e6;
    const double measured_ms = truth.at("graph_untraced_median_ms").get<double>();
    CAPTURE(predicted_ms, measured_ms, double(w.mean_step_ns) / 1e6);
    CHECK(predicted_ms >= 0.8 * measured_ms);
    CHECK(predicted_ms <= 1.2 * measured_ms);
}

TEST_CASE(
    "launch and host separate on real jobs: graphs are the top finding where they help most", "[whatif][realjobs]")
{
    // The FP8 sample step: graphs took it from 47 to 20 ms per step; a 4 ms sleeping loader dominates the other.
    const TraceModel fp8 = load_job("h100-whatif-fp8-sample-eager");
    const WhatIf fp8_what_if = estimate_what_if(analyze(fp8));
    REQUIRE_FALSE(fp8_what_if.recommendations.empty());
    CHECK(fp8_what_if.recommendations.front().kind == RecommendationKind::CudaGraphs);
    const Report stall = analyze(load_job("h100-whatif-host-stall-eager"));
    CHECK(stall.totals.cause_ns[size_t(BubbleCause::Host)] > stall.totals.cause_ns[size_t(BubbleCause::Launch)]);
    const WhatIf stall_what_if = estimate_what_if(stall);
    REQUIRE_FALSE(stall_what_if.recommendations.empty());
    CHECK(stall_what_if.recommendations.front().kind == RecommendationKind::ReduceHostWork);
}

TEST_CASE("the collector's own statistics kernels are not the job's", "[collector_work][realjobs]")
{
    // The FP8 sample with statistics every step: fp8scope's kernels are in the trace, marked, and left out.
    const TraceModel model = load_job("h100-train-fp8-stats");
    CHECK(model.collector_work.size() > 0);
    for (size_t k = 0; k < model.kernels.size(); ++k)
        REQUIRE(model.strings[model.kernels.name[k]].find("fp8scope::probes") == std::string_view::npos);
    const Report report = analyze(model);
    CHECK(report.collector_work.kernels > 0);
    CHECK(report.collector_work.time_in_steps_ns > 0);
    CHECK(report.collector_work.share() < 0.5);
}
