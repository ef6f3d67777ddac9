// Compare without numerics and FP8's price (docs/analysis.md "Compare"): why drift and loss were not compared, and the
// traced step change split into GEMM time, bookkeeping, launch idle and the rest, on launch-bound scenario pairs.
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::WithinAbs;

TEST_CASE("compare says in one line why drift and loss were not compared, and compares the performance", "[compare]")
{
    // What is left of each: the reason, no site, failing default budgets, and the performance of both runs.
    const auto not_compared = [](const Compared& c) {
        const CompareResult& r = c.result();
        CHECK_FALSE(r.numerics_compared());
        CHECK(r.numerics_not_compared.find('\n') == std::string::npos);
        CHECK(r.sites.empty());
        CHECK(r.flagged.empty());
        // The loss needs no tensor statistics (issue 42): it says its own reason, unless the jobs differ or share no
        // step.
        CHECK_FALSE(r.loss.final_relative_delta);
        CHECK((r.loss.unavailable == r.numerics_not_compared
            || r.loss.unavailable
                == "no 'loss' scalar (fp8scope.log_scalar) in the compared steps of the run and the "
                   "reference"));
        const CompareVerdict verdict = default_compare_verdict(r);
        CHECK_FALSE(verdict.healthy());
        CHECK_FALSE(verdict.drift.passed); // no drifting site among none seen is not a pass
        CHECK(verdict.drift.unavailable == r.numerics_not_compared);
        CHECK_FALSE(verdict.loss.passed);
        CHECK(r.performance.run.steps == 4);
        CHECK(r.performance.run.busy_ns == 50'000);
        CHECK(r.performance.step_median_ns.run == static_cast<double>(kStepNs));
        return r.numerics_not_compared;
    };
    const auto with_site = [](Job& job, int steps, int first, schema::Dtype dtype) {
        const int64_t site = job.gemm("p", "64x128x32", schema::TensorRole::B, dtype);
        for (int i = first; i < first + steps; ++i)
            job.sample(
                site, i, 0.1, dtype, 1.0, dtype == schema::Dtype::E4M3 ? std::optional(1.0 / 448) : std::nullopt);
    };
    SECTION("no tensor statistics in the reference")
    {
        Job run, ref;
        run.steps(4);
        ref.steps(4);
        with_site(run, 4, 0, schema::Dtype::E4M3);
        Compared c = compare_jobs(run, ref, "refuse-stats");
        CHECK_THAT(not_compared(c), Contains("the reference '") && Contains("' has no tensor statistics: record it"));
    }
    SECTION("no tensor statistics in either")
    {
        Job run, ref;
        run.steps(4);
        ref.steps(4);
        Compared c = compare_jobs(run, ref, "refuse-neither");
        CHECK_THAT(not_compared(c), StartsWith("neither the run '") && Contains("has tensor statistics: record them"));
    }
    SECTION("different jobs")
    {
        Job run("python3 -u train.py --precision fp8"), ref("/usr/bin/python3 other.py");
        run.steps(4);
        ref.steps(4);
        with_site(run, 4, 0, schema::Dtype::E4M3);
        with_site(ref, 4, 0, schema::Dtype::BFloat16);
        Compared c = compare_jobs(run, ref, "refuse-jobs");
        CHECK(not_compared(c) == "the traces are of different jobs: the run ran 'train.py', the reference 'other.py'");
    }
    SECTION("no common step: each trace's own steps")
    {
        Job run, ref;
        run.steps(4);
        ref.steps(4, { { "elementwise", 50'000 } }, 10);
        with_site(run, 4, 0, schema::Dtype::E4M3);
        with_site(ref, 4, 10, schema::Dtype::BFloat16);
        Compared c = compare_jobs(run, ref, "refuse-steps");
        CHECK(not_compared(c)
            == "no common step: the run has steps 0..3 (markers), the reference steps 10..13 (markers)");
        CHECK(c.result().performance.steps_basis == PerformanceSteps::EachOwn);
        CHECK(c.result().performance.ref.steps == 4);
    }
    SECTION("no site in common")
    {
        Job run, ref;
        run.steps(4);
        ref.steps(4);
        with_site(run, 4, 0, schema::Dtype::E4M3);
        const int64_t other = ref.gemm("q", "16x16x16", schema::TensorRole::A, schema::Dtype::BFloat16);
        for (int i = 0; i < 4; ++i)
            ref.sample(other, i, 0.1, schema::Dtype::BFloat16, 1.0);
        Compared c = compare_jobs(run, ref, "refuse-sites");
        CHECK_THAT(not_compared(c), StartsWith("no tensor site in common: the run has 1 site(s) with samples"));
    }
}

TEST_CASE("compare gives the loss delta of two runs of one job whose tensor sites match none", "[compare]")
{
    // A zero-code FP8 run and its BF16 twin (issue 42): torch._scaled_mm's operands and the twin's matmuls are
    // different GEMM sites, but the loss that record's backward hook logs is the same scalar in both.
    Job run, ref;
    run.steps(4);
    ref.steps(4);
    const int64_t fp8 = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t bf16 = ref.gemm("q", "128x64x32", schema::TensorRole::A, schema::Dtype::BFloat16);
    for (int i = 0; i < 4; ++i) {
        run.sample(fp8, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        ref.sample(bf16, i, 0.1, schema::Dtype::BFloat16, 1.0);
        // Two micro-batches a step: the step's loss is their mean (run 2.1, ref 2.0: 5%).
        for (const double micro : { -0.1, 0.1 }) {
            run.s.scalar(run.host, i * kStepNs + 500'000, "loss", 2.1 + micro, i);
            ref.s.scalar(ref.host, i * kStepNs + 500'000, "loss", 2.0 + micro, i);
        }
    }
    Compared c = compare_jobs(run, ref, "loss-no-sites");
    const CompareResult& r = c.result();
    CHECK_FALSE(r.numerics_compared());
    CHECK_THAT(r.numerics_not_compared, StartsWith("no tensor site in common"));
    REQUIRE(r.loss.final_relative_delta);
    CHECK_THAT(*r.loss.final_relative_delta, WithinAbs(0.05, 1e-9));
    REQUIRE(r.loss.steps.size() == 4);
    CHECK_THAT(r.loss.steps.front().run, WithinAbs(2.1, 1e-12));
    CHECK(default_compare_verdict(r).loss.passed == false); // 5% is above the 1e-2 threshold
}

namespace {

constexpr int64_t kLaunchPeriodNs = 50'000; // the thread launches one kernel every 50 us

// Launch-bound steps (docs/analysis.md "Compare", FP8's price): `count` steps of `step_ns`, step i from i * step_ns,
// each the kernels given in order, one per kLaunchPeriodNs: a 5 us launch call, its kernel 2 us after the call returns.
// The thread never falls silent for more than 45 us, so every gap is `launch`. With `collector_ns` > 0, the collector
// launches one kernel of that length 23 us into each step: inside the gap after the first kernel when that kernel is
// shorter. A last step with one kernel follows, so that a kernel ends the analysed steps' last gap (nothing ends a
// device's last gap, and that gap is `host`); the comparison leaves it out.
void launch_bound_steps(Job& job, int count, int64_t step_ns,
    const std::vector<std::pair<std::string_view, int64_t>>& kernels, int64_t collector_ns)
{
    const auto launch_at = [&](int64_t call_ns, std::string_view name, int64_t length_ns) {
        return job.s.launch(job.host, { .api_start_ns = call_ns, .api_end_ns = call_ns + 5'000 },
            { .start_ns = call_ns + 7'000, .end_ns = call_ns + 7'000 + length_ns, .name = std::string(name) });
    };
    for (int i = 0; i <= count; ++i) {
        const int64_t t0 = i * step_ns;
        job.s.step_marker(job.host, t0, i);
        if (i == count) {
            launch_at(t0, "elementwise", 10'000);
            break;
        }
        for (size_t k = 0; k < kernels.size(); ++k)
            launch_at(t0 + static_cast<int64_t>(k) * kLaunchPeriodNs, kernels[k].first, kernels[k].second);
        if (collector_ns > 0)
            job.s.collector_work(launch_at(t0 + 23'000, "fp8scope::probes::stats_kernel", collector_ns));
    }
}

} // namespace

TEST_CASE("FP8's price: the traced step change as GEMM time, bookkeeping, launch idle and the rest", "[compare]")
{
    // The reference: 1 ms steps of 20 launches (2 BF16 GEMMs of 40 us, 18 element-wise kernels of 10 us): busy 260
    // us, launch idle 740 us. The FP8 run: 2 ms steps of 40 launches (2 FP8 GEMMs of 20 us, 6 casts and 18
    // element-wise kernels of 10 us, 14 more element-wise kernels of 5 us): busy 350 us, launch idle 1,650 us.
    constexpr int kSteps = 5;
    std::vector<std::pair<std::string_view, int64_t>> ref_kernels { { kBf16Gemm, 40'000 }, { kBf16Gemm, 40'000 } };
    std::vector<std::pair<std::string_view, int64_t>> run_kernels { { kFp8Gemm, 20'000 }, { kFp8Gemm, 20'000 } };
    for (int k = 0; k < 6; ++k)
        run_kernels.emplace_back(kCast, 10'000);
    for (int k = 0; k < 18; ++k) {
        ref_kernels.emplace_back("elementwise", 10'000);
        run_kernels.emplace_back("elementwise", 10'000);
    }
    for (int k = 0; k < 14; ++k)
        run_kernels.emplace_back("elementwise_small", 5'000);
    REQUIRE(ref_kernels.size() == 20);
    REQUIRE(run_kernels.size() == 40);
    Job run, ref;
    // The collector's statistics kernel lands in the gap after the first GEMM: 50 - 20 = 30 us in the run, 50 - 40 =
    // 10 us in the reference.
    launch_bound_steps(run, kSteps, 2 * kStepNs, run_kernels, 2'000);
    launch_bound_steps(ref, kSteps, kStepNs, ref_kernels, 1'000);
    const int64_t rs = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t fs = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < kSteps; ++i) {
        run.sample(rs, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448).timestamp_ns = i * 2 * kStepNs + 10'000;
        ref.sample(fs, i, 0.1, schema::Dtype::BFloat16, 1.0);
    }
    Compared c { run.load("price-run"), ref.load("price-ref"), {}, {}, CompareRefusal {} };
    CompareOptions options;
    options.report.steps.warmup = 0;
    options.report.first_step = 1; // step 0's first gap has no kernel before it
    options.report.last_step = kSteps - 1;
    c.run_report = analyze(c.run_model, options.report);
    c.ref_report = analyze(c.ref_model, options.report);
    c.outcome = compare_runs({ c.run_model, c.run_report, c.ref_model, c.ref_report }, options);
    const PerformanceComparison& p = c.result().performance;

    REQUIRE(p.run.steps == kSteps - 1);
    CHECK(p.run.kernels_per_step == 40); // the collector's kernel is not the job's
    CHECK(p.ref.kernels_per_step == 20);
    CHECK(p.run.step_ns == 2'000'000);
    CHECK(p.ref.step_ns == 1'000'000);
    CHECK(p.run.busy_ns == 350'000);
    CHECK(p.ref.busy_ns == 260'000);
    CHECK(p.run.idle_ns == 1'650'000);
    CHECK(p.run.launch_idle_ns == 1'650'000); // every gap is `launch`
    CHECK(p.ref.launch_idle_ns == 740'000);
    CHECK(p.run.other_kernel_ns == 250'000);
    CHECK(p.ref.other_kernel_ns == 180'000);
    // The four parts, which sum to the step change exactly.
    CHECK(p.step_change_ns == 1'000'000);
    CHECK(p.gemm_saved_ns == 40'000);
    CHECK(p.bookkeeping_added_ns == 60'000);
    CHECK(p.launch_idle_added_ns == 910'000);
    CHECK(p.rest_ns == 70'000);
    CHECK(p.other_kernels_added_ns == 70'000); // the whole rest here: no other idle, no overlap
    CHECK(-p.gemm_saved_ns + p.bookkeeping_added_ns + p.launch_idle_added_ns + p.rest_ns == p.step_change_ns);
    REQUIRE(p.explained_share);
    CHECK_THAT(*p.explained_share, WithinAbs(0.93, 1e-12));
    CHECK(p.kernels_added_per_step == 20);
    CHECK(p.net_gain_ns == -20'000); // what the price was before: GEMM saved - bookkeeping added
    // What wins it back. A graph keeps the default 300 ns kernel-to-kernel gap in each of the step's launch bubbles:
    // 41 in the run's step (one before each kernel and the step's tail), 21 in the reference's.
    CHECK(p.run.graph_removable_ns == 1'650'000 - 41 * 300);
    CHECK(p.ref.graph_removable_ns == 740'000 - 21 * 300);
    CHECK(p.graphs_recover_ns == 910'000 - 20 * 300);
    CHECK(p.fused_casts_recover_ns == 60'000);
    CHECK(p.compile_recovers_up_to_ns == 910'000 + 60'000 + 70'000);
    // The bubble in which the collector's kernel ran: 30 us in the run, 10 us in the reference.
    CHECK(p.run.recording_idle_ns == 30'000);
    CHECK(p.ref.recording_idle_ns == 10'000);
    CHECK(p.recording_idle_added_ns == 20'000);
    CHECK(p.untraced_change_estimate_ns == 980'000);
}

TEST_CASE("FP8's price with no step change has nothing to explain", "[compare]")
{
    Job run, ref;
    run.steps(4, { { kFp8Gemm, 100'000 } });
    ref.steps(4, { { kBf16Gemm, 100'000 } });
    one_steady_site(run, ref, 4);
    const Compared c = compare_jobs(run, ref, "price-none");
    const PerformanceComparison& p = c.result().performance;
    CHECK(p.step_change_ns == 0);
    CHECK_FALSE(p.explained_share);
    CHECK(p.gemm_saved_ns == 0);
    CHECK(p.launch_idle_added_ns + p.rest_ns == 0);
    CHECK(p.graphs_recover_ns >= 0);
    CHECK(p.fused_casts_recover_ns == 0);
}
namespace {

// GPU-bound steps, as a compiled job runs: the host launches each step's kernels 1 us apart at the step's start and
// the GPU runs them back to back, each kGapNs after the previous one ends (a queued launch's gap); a last step with
// one kernel closes the analysed ones.
constexpr int64_t kGapNs = 2'000;

void gpu_bound_steps(Job& job, int count, const std::vector<std::pair<std::string_view, int64_t>>& kernels)
{
    for (int i = 0; i <= count; ++i) {
        const int64_t t0 = i * kStepNs;
        job.s.step_marker(job.host, t0, i);
        int64_t gpu = t0 + 50'000;
        for (size_t k = 0; k < (i == count ? 1 : kernels.size()); ++k) {
            const int64_t call = t0 + static_cast<int64_t>(k) * 1'000;
            job.s.launch(job.host, { .api_start_ns = call, .api_end_ns = call + 500 },
                { .start_ns = gpu, .end_ns = gpu + kernels[k].second, .name = std::string(kernels[k].first) });
            gpu += kernels[k].second + kGapNs;
        }
    }
}

} // namespace

TEST_CASE("FP8's price under torch.compile: fused bookkeeping net of the model work it absorbed, and queued gaps",
    "[compare]")
{
    // The reference: 2 BF16 GEMMs of 40 us and 2 RMSNorms of 20 us a step (Inductor reductions: other kernels). The
    // run: 2 FP8 GEMMs of 20 us, the RMSNorms now taking their output's amax as well (25 us: fused bookkeeping with
    // model work), and 2 casts of 5 us (fused bookkeeping only).
    constexpr int kSteps = 5;
    constexpr std::string_view kNorm = "triton_red_fused_add_mean_pow_rsqrt_0";
    constexpr std::string_view kNormAmax = "triton_red_fused_abs_add_max_mean_pow_rsqrt_0";
    constexpr std::string_view kCastOnly = "triton_poi_fused__to_copy_clamp_reciprocal_1";
    REQUIRE(classify_kernel_name(kNorm).cls == KernelClass::Other);
    REQUIRE(inductor_bookkeeping(kNormAmax) == InductorBookkeeping::WithModelWork);
    REQUIRE(inductor_bookkeeping(kCastOnly) == InductorBookkeeping::OnlyBookkeeping);
    Job run, ref;
    gpu_bound_steps(
        ref, kSteps, { { kBf16Gemm, 40'000 }, { kNorm, 20'000 }, { kBf16Gemm, 40'000 }, { kNorm, 20'000 } });
    gpu_bound_steps(run, kSteps,
        { { kCastOnly, 5'000 }, { kFp8Gemm, 20'000 }, { kNormAmax, 25'000 }, { kCastOnly, 5'000 }, { kFp8Gemm, 20'000 },
            { kNormAmax, 25'000 } });
    Compared c { run.load("compiled-run"), ref.load("compiled-ref"), {}, {}, CompareRefusal {} };
    CompareOptions options;
    options.report.steps.warmup = 0;
    options.report.last_step = kSteps - 1;
    c.run_report = analyze(c.run_model, options.report);
    c.ref_report = analyze(c.ref_model, options.report);
    c.outcome = compare_runs({ c.run_model, c.run_report, c.ref_model, c.ref_report }, options);
    const PerformanceComparison& p = c.result().performance;

    REQUIRE(p.run.steps == kSteps);
    CHECK(p.ref.other_kernel_ns == 40'000);
    CHECK(p.run.other_kernel_ns == 0);
    CHECK(p.run.fused_bookkeeping_ns == 60'000);
    CHECK(p.run.fused_with_model_work_ns == 50'000);
    // The RMSNorms' 40 us left the other kernels for the fused ones: model work absorbed, not FP8's price.
    CHECK(p.fused_absorbed_ns == 40'000);
    CHECK(p.bookkeeping_added_ns == 20'000); // 60 - 40
    CHECK(p.gemm_saved_ns == 40'000);
    CHECK(p.other_kernels_added_ns == 0);
    CHECK(p.kernel_time_added_ns == -20'000);
    // Every kernel but each step's first waited only for the GPU: the queued gap is the 2 us between them.
    CHECK(p.ref.queued_gap_ns == Approx(kGapNs));
    CHECK(p.run.queued_gap_ns == Approx(kGapNs));
    CHECK(p.kernels_added_per_step == 2);
    CHECK(p.gpu_bound_change_ns == Approx(-20'000 + 2 * kGapNs));
}
