// What-if estimates and recommendations on the real H100 traces: the figures they quote come from the report. Their
// worst steps and the per-step sums over devices (bubbles_per_step, shared with the budgets) on a scenario with
// exact figures and on the real traces.
#include "analysis_test_support.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <utility>

using namespace fp8scope::analyzer;
using fp8scope::testing::Scenario;

namespace {

Report report_of(const char* name)
{
    auto model = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + name);
    REQUIRE(model);
    return analyze(*model);
}

const Recommendation* find(const WhatIf& w, RecommendationKind kind)
{
    auto it = std::ranges::find_if(w.recommendations, [&](const Recommendation& r) { return r.kind == kind; });
    return it == w.recommendations.end() ? nullptr : &*it;
}

} // namespace

TEST_CASE("the launch-bound FP8 sample: CUDA Graphs first, FP8 bookkeeping fusion after", "[recommendations][sample]")
{
    // PyTorch eager dispatches ~1,500 tiny kernels per step; its per-op work happens outside CUDA calls, and the
    // earlier rule called it host work (docs/analysis.md "Causes of bubbles"). The same step replayed from a CUDA graph
    // ran 47 -> 20 ms on an H100 (docs/benchmarks.md), so graphs must come first.
    const Report report = report_of("h100-train-fp8.sqlite");
    const WhatIf w = estimate_what_if(report);
    REQUIRE(!w.recommendations.empty());
    CHECK(w.recommendations.front().kind == RecommendationKind::CudaGraphs);
    const auto steps = static_cast<int64_t>(report.steps.steps.size());
    CHECK(w.mean_step_ns == report.totals.step_ns / steps);
    // The graph recommendation's saving is the step minus the CUDA Graphs estimate, at most the launch idle.
    CHECK(w.recommendations.front().saving_per_step_ns == w.mean_step_ns - w.without_launch_overhead_ns);
    // At most the launch and host idle: graphs remove launch gaps and let the GPU overlap the host's stalls.
    CHECK(w.mean_step_ns - w.without_launch_overhead_ns
        <= (report.totals.cause_ns[static_cast<size_t>(BubbleCause::Launch)]
               + report.totals.cause_ns[static_cast<size_t>(BubbleCause::Host)])
            / steps);
    const Recommendation* fuse = find(w, RecommendationKind::FuseFp8Bookkeeping);
    REQUIRE(fuse != nullptr);
    CHECK(fuse->saving_per_step_ns
        == (report.kernel_classes.of(KernelClass::AmaxScale).time_ns
               + report.kernel_classes.of(KernelClass::Cast).time_ns)
            / steps);
    for (size_t i = 1; i < w.recommendations.size(); ++i)
        CHECK(w.recommendations[i - 1].saving_per_step_ns >= w.recommendations[i].saving_per_step_ns);
}

TEST_CASE("the BF16 sample gets no FP8 recommendation, the syncs sample gets the sync one", "[recommendations][sample]")
{
    CHECK(
        find(estimate_what_if(report_of("h100-train-bf16.sqlite")), RecommendationKind::FuseFp8Bookkeeping) == nullptr);
    const WhatIf syncs = estimate_what_if(report_of("h100-sample-syncs.sqlite"));
    CHECK(find(syncs, RecommendationKind::RemoveSync) != nullptr);
    CHECK(find(syncs, RecommendationKind::FuseFp8Bookkeeping) == nullptr);
}

namespace {

// Three marked steps of 1 ms, one kernel each, launched by a call that runs until just before the kernel starts:
// the gap before each kernel is launch-bound (the thread issued work through it). The gaps are 110, 310 and 60 us,
// so step 1 is the worst (31% of the step). No cast, sync or host idle time.
// `name`: each test case its own file, since CTest runs test cases in parallel.
Report launch_bound_report(const std::string& name)
{
    Scenario s;
    const auto host = s.thread(s.session().pid, s.session().pid);
    const int64_t call_ns[] = { 100'000, 300'000, 50'000 };
    for (int64_t step = 0; step < 3; ++step) {
        const int64_t t = step * 1'000'000;
        s.step_marker(host, t, step);
        s.launch(host, { .api_start_ns = t, .api_end_ns = t + call_ns[step] },
            { .start_ns = t + call_ns[step] + 10'000, .end_ns = t + 1'000'000, .name = "gemm" });
    }
    ReportOptions options;
    options.steps.warmup = 0;
    return analyze(fp8scope::testing::write_and_load(s, name), options);
}

} // namespace

TEST_CASE("per-step bubble totals: one entry per step in order, summed over the counted devices",
    "[recommendations][budgets]")
{
    const Report report = launch_bound_report("recommendation-per-step-totals");
    const auto steps = bubbles_per_step(report);
    REQUIRE(steps.size() == 3);
    const int64_t launch_ns[] = { 110'000, 310'000, 60'000 };
    for (size_t i = 0; i < 3; ++i) {
        INFO("step " << i);
        CHECK(steps[i].step_index == static_cast<int64_t>(i));
        CHECK(steps[i].totals.step_ns == 1'000'000);
        CHECK(steps[i].totals.idle_ns == launch_ns[i]);
        CHECK(steps[i].totals.cause_ns[static_cast<size_t>(BubbleCause::Launch)] == launch_ns[i]);
        CHECK(steps[i].totals.bubble_ratio == Approx(static_cast<double>(launch_ns[i]) / 1'000'000));
    }
}

TEST_CASE(
    "a recommendation carries its worst step: where its figure is the largest share of the step", "[recommendations]")
{
    const Report report = launch_bound_report("recommendation-worst-step");
    const WhatIf w = estimate_what_if(report);
    REQUIRE(w.recommendations.size() == 1);
    const Recommendation& graphs = w.recommendations.front();
    CHECK(graphs.kind == RecommendationKind::CudaGraphs);
    // Each launch gap shrinks to the graph's kernel gap; the estimate is the median step's (the 110 us gap), and the
    // saving the mean step (1 ms) less it.
    CHECK(graphs.saving_per_step_ns == 110'000 - kDefaultGraphKernelGapNs);
    REQUIRE(graphs.worst_step);
    CHECK(graphs.worst_step->step_index == 1);
    CHECK(graphs.worst_step->share == Approx(0.31));
    CHECK(std::string(recommendation_figure(graphs.kind)) == "idle caused by launch");
    // Kinds the report does not recommend still have a worst step (the first, at 0), for a passing check to quote.
    for (const auto kind : { RecommendationKind::ReduceHostWork, RecommendationKind::RemoveSync,
             RecommendationKind::FuseFp8Bookkeeping }) {
        const auto worst = recommendation_worst_step(report, kind);
        REQUIRE(worst);
        CHECK(worst->step_index == 0);
        CHECK(worst->share == 0);
    }
}

TEST_CASE("recommendations below the minimum saving are not made, no steps, no worst step", "[recommendations]")
{
    CHECK(kMinRecommendationSavingShare == 0.01);
    for (const char* trace :
        { "h100-train-fp8.sqlite", "h100-sample-syncs.sqlite", "h100-sample-launch-bound.sqlite" }) {
        INFO(trace);
        const Report report = report_of(trace);
        const auto steps = bubbles_per_step(report);
        REQUIRE(steps.size() == report.steps.steps.size());
        int64_t step_ns = 0, idle_ns = 0;
        for (const auto& s : steps) {
            step_ns += s.totals.step_ns;
            idle_ns += s.totals.idle_ns;
        }
        CHECK(step_ns == report.totals.step_ns);
        CHECK(idle_ns == report.totals.idle_ns);
        for (const Recommendation& r : estimate_what_if(report).recommendations) {
            CHECK(r.saving_share >= kMinRecommendationSavingShare);
            REQUIRE(r.worst_step);
            const auto again = recommendation_worst_step(report, r.kind);
            REQUIRE(again);
            CHECK(r.worst_step->step_index == again->step_index);
            // No step has a larger share of the figure than the worst one.
            if (const auto cause = recommendation_cause(r.kind)) {
                for (const auto& s : steps)
                    CHECK(static_cast<double>(s.totals.cause_ns[static_cast<size_t>(*cause)])
                        <= r.worst_step->share * static_cast<double>(s.totals.step_ns) + 1e-6);
            }
        }
    }
    Report empty = report_of("h100-train-fp8.sqlite");
    empty.steps.steps.clear();
    CHECK_FALSE(recommendation_worst_step(empty, RecommendationKind::CudaGraphs));
}

TEST_CASE("each kind of recommendation names the bubble cause its figure measures", "[recommendations]")
{
    // recommendation_figure() in other words: the idle time of one cause, or kernel time (no cause).
    const std::pair<RecommendationKind, std::optional<BubbleCause>> expected[] = {
        { RecommendationKind::CudaGraphs, BubbleCause::Launch },
        { RecommendationKind::RemoveSync, BubbleCause::Sync },
        { RecommendationKind::FuseFp8Bookkeeping, std::nullopt },
        { RecommendationKind::ReduceHostWork, BubbleCause::Host },
    };
    for (const auto& [kind, cause] : expected) {
        INFO(recommendation_kind_name(kind));
        CHECK(recommendation_cause(kind) == cause);
        const std::string figure = recommendation_figure(kind);
        CHECK(figure.starts_with("idle caused by ") == cause.has_value());
        if (cause)
            CHECK(figure == std::string("idle caused by ") + bubble_cause_name(*cause));
    }
}

TEST_CASE(
    "the sync recommendation saves what the what-if's 'without sync stalls' gives back", "[recommendations][sample]")
{
    // docs/analysis.md "What-if estimates": on the syncs sample the recommendation once said 14.6 us (cudaMemcpy's idle
    // alone) where the what-if line said 61 us (every sync's). Both are now every host-blocking call's idle time.
    for (const char* trace : { "h100-sample-syncs.sqlite", "nsys/h100-sample-syncs.nsys.sqlite" }) {
        CAPTURE(trace);
        const Report report = report_of(trace);
        const WhatIf w = estimate_what_if(report);
        const Recommendation* sync = find(w, RecommendationKind::RemoveSync);
        REQUIRE(sync != nullptr);
        CHECK(sync->saving_per_step_ns == w.mean_step_ns - w.without_syncs_ns);
        CHECK(sync->saving_per_step_ns > 50'000); // 4 sync APIs of about 14 us each per step
        CHECK(sync->reason.find("cudaMemcpy") != std::string::npos); // the one that caused the most is named
        CHECK(sync->reason.starts_with("host-blocking calls left the GPU idle for "));
    }
}

TEST_CASE("the CUDA Graphs recommendation names every part of its saving", "[recommendations][sample]")
{
    // docs/analysis.md "What-if estimates": on the Nsight export of the syncs sample it once said 17.0% "because the
    // GPU waited for kernel launches for 2.4%"; the rest was the dispatch after each sync returned, which a replay
    // removes too.
    const Report report = report_of("nsys/h100-sample-syncs.nsys.sqlite");
    const WhatIf w = estimate_what_if(report);
    const Recommendation* graphs = find(w, RecommendationKind::CudaGraphs);
    REQUIRE(graphs != nullptr);
    CHECK(graphs->saving_per_step_ns == w.mean_step_ns - w.without_launch_overhead_ns);
    CHECK(graphs->reason.find("for the dispatch after each host-blocking sync returned for ") != std::string::npos);
    // The parts named add up to at least the saving: launch idle + host work between launches + dispatch after syncs
    // + what the median adds, each per step.
    const auto steps = static_cast<int64_t>(report.steps.steps.size());
    const BubbleTotals& t = report.totals;
    const int64_t parts
        = (t.cause_ns[static_cast<size_t>(BubbleCause::Launch)] + t.host_in_launches_ns + t.sync_after_return_ns)
        / steps;
    CHECK(parts > graphs->saving_per_step_ns * 9 / 10); // the remainder is small here: a median against means
    // Every recommendation on every sample trace: its saving never exceeds the step.
    for (const char* trace : { "h100-train-fp8.sqlite", "h100-sample-syncs.sqlite", "h200-sample-host-stall.sqlite" })
        for (const Recommendation& r : estimate_what_if(report_of(trace)).recommendations)
            CHECK(r.saving_share <= 1.0);
}

TEST_CASE("steps that run from CUDA graphs already are not told to capture one", "[recommendations][zoo]")
{
    // Graph-aware recommendations (docs/analysis.md "What-if estimates"), on the zoo's real traces (tests/gpu/zoo): a
    // hand-made graph replay, a JAX job (XLA's command buffers: every kernel from a graph), torch.compile
    // reduce-overhead (81% from graphs, the optimizer eager) and an eager MLP.
    const auto what_if
        = [](const char* name) { return estimate_what_if(report_of((std::string("zoo/") + name).c_str())); };
    const WhatIf replay = what_if("graph_replay.sqlite");
    CHECK(replay.graph_kernel_share >= kGraphedStepShare);
    for (const Recommendation& r : replay.recommendations)
        CHECK(r.title.find("Capture") == std::string::npos);

    const WhatIf jax = what_if("jax_mlp.sqlite");
    CHECK(jax.graph_kernel_share == 1.0);
    const Recommendation* between = find(jax, RecommendationKind::CudaGraphs);
    REQUIRE(between != nullptr);
    CHECK(between->title == "Cut the host work between the step's CUDA graph launches");
    // 38 kernels in each of 18 steps (693 before issue 42, when the markers' host times cut the GPU's steps).
    CHECK(between->reason.starts_with("the step's kernels already run from CUDA graphs (684 of 684)"));

    const WhatIf compiled = what_if("compile_reduce_overhead.sqlite");
    CHECK(compiled.graph_kernel_share > 0.5);
    CHECK(compiled.graph_kernel_share < kGraphedStepShare);
    const Recommendation* rest = find(compiled, RecommendationKind::CudaGraphs);
    REQUIRE(rest != nullptr);
    CHECK(rest->title.starts_with("Capture the rest of the step in CUDA Graphs"));

    const WhatIf eager = what_if("eager_mlp_item.sqlite");
    CHECK(eager.graph_kernel_share == 0.0);
    const Recommendation* capture = find(eager, RecommendationKind::CudaGraphs);
    REQUIRE(capture != nullptr);
    CHECK(capture->title.starts_with("Capture the step in a CUDA Graph"));
}
