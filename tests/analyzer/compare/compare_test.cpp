// Compare (docs/analysis.md "Compare"): scenario pairs written through the real writer and loaded back, one rule per
// test, with exact expected numbers: matching across dtypes, A/B normalisation, unmatched sites, the drift test on a
// healthy and a planted series, first-divergent ordering, the reference's distribution under the run's scale, the
// loss delta, FP8's net gain, the scaling recipe, why drift and loss were not compared, and the check budgets. The
// performance per step is tested in compare_performance_test.cpp.
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/trace/report.hpp"

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

namespace {

const CompareSite& site_with(const CompareResult& r, int64_t run_site)
{
    for (const CompareSite& s : r.sites)
        if (s.run_site_id == run_site)
            return s;
    FAIL("run site " << run_site << " is not matched");
    throw 0;
}

// Deterministic noise in [-0.08, 0.08] bits.
double noise(int i)
{
    constexpr double kValues[] = { 0.03, -0.05, 0.08, -0.02, 0.0, 0.06, -0.08, 0.01, -0.04, 0.05, -0.01, 0.02 };
    return kValues[static_cast<size_t>(i) % std::size(kValues)];
}

} // namespace

TEST_CASE("compare matches GEMM sites across dtypes and normalises A/B to m <= n", "[compare]")
{
    Job run, ref;
    run.steps(6);
    ref.steps(6);
    const std::string path = "train_step/blk.fc";
    // The run computes C(64x32) = A(64x16) B(16x32); the reference's library the transposed C^T = B^T A^T, so its A is
    // the run's B and its B the run's A.
    const int64_t run_a = run.gemm(path, "64x32x16", schema::TensorRole::A, schema::Dtype::E4M3);
    const int64_t run_b = run.gemm(path, "64x32x16", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t run_d = run.gemm(path, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t ref_a = ref.gemm(path, "32x64x16", schema::TensorRole::A, schema::Dtype::BFloat16);
    const int64_t ref_b = ref.gemm(path, "32x64x16", schema::TensorRole::B, schema::Dtype::BFloat16);
    const int64_t ref_d = ref.gemm(path, "32x64x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    for (int i = 0; i < 6; ++i) {
        run.sample(run_a, i, 0.2, schema::Dtype::E4M3, 2.0, 2.0 / 448);
        run.sample(run_b, i, 0.2, schema::Dtype::E4M3, 0.5, 0.5 / 448);
        run.sample(run_d, i, 0.2, schema::Dtype::BFloat16, 8.0);
        ref.sample(ref_b, i, 0.2, schema::Dtype::BFloat16, 2.0); // = the run's A
        ref.sample(ref_a, i, 0.2, schema::Dtype::BFloat16, 0.5); // = the run's B
        ref.sample(ref_d, i, 0.2, schema::Dtype::BFloat16, 16.0);
    }
    const Compared c = compare_jobs(run, ref, "ab");
    const CompareResult& r = c.result();
    REQUIRE(r.sites.size() == 3);
    CHECK(r.run_unmatched.empty());
    CHECK(r.ref_unmatched.empty());
    CHECK(r.alignment.common.size() == 6);
    const CompareSite& a = site_with(r, run_a);
    CHECK(a.ref_site_id == ref_b);
    CHECK(a.role == "B");
    CHECK(a.role_swapped);
    CHECK_FALSE(a.orientation_ambiguous);
    CHECK(a.run_dtype == static_cast<int32_t>(schema::Dtype::E4M3));
    CHECK(a.ref_dtype == static_cast<int32_t>(schema::Dtype::BFloat16));
    REQUIRE(a.steps.size() == 6);
    CHECK(*a.steps[0].log2_amax_ratio == 0.0);
    CHECK(site_with(r, run_b).ref_site_id == ref_a);
    const CompareSite& d = site_with(r, run_d);
    CHECK(d.ref_site_id == ref_d);
    CHECK(d.role == "D");
    CHECK(*d.steps[3].log2_amax_ratio == -1.0);
    CHECK(d.logical_role == "output");
    CHECK(d.recipe == ScalingRecipe::NotFp8);
}

TEST_CASE("compare names why a site has no partner", "[compare]")
{
    Job run, ref;
    run.steps(4);
    ref.steps(4);
    const std::string p = "step/layer";
    const int64_t only_here = run.gemm("step/elsewhere", "32x64x16", schema::TensorRole::A, schema::Dtype::E4M3);
    const int64_t first = run.gemm(p, "32x32x32", schema::TensorRole::A, schema::Dtype::E4M3);
    const int64_t second = run.gemm(p, "32x32x32", schema::TensorRole::A, schema::Dtype::E4M3);
    const int64_t other_shape = run.gemm(p, "16x64x16", schema::TensorRole::A, schema::Dtype::E4M3);
    const int64_t ref_one = ref.gemm(p, "32x32x32", schema::TensorRole::A, schema::Dtype::BFloat16);
    const int64_t ref_probe = ref.s.tensor_site(
        "input", schema::TensorRole::Input, schema::Dtype::BFloat16, 1, 64, schema::StatsSource::ExplicitProbe, p);
    for (int i = 0; i < 4; ++i) {
        run.sample(only_here, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        run.sample(first, i, 0.2, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        run.sample(second, i, 0.3, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        run.sample(other_shape, i, 0.4, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        ref.sample(ref_one, i, 0.2, schema::Dtype::BFloat16, 1.0);
        ref.sample(ref_probe, i, 0.1, schema::Dtype::BFloat16, 1.0);
    }
    const Compared c = compare_jobs(run, ref, "unmatched");
    const CompareResult& r = c.result();
    REQUIRE(r.sites.size() == 1);
    CHECK(r.sites[0].run_site_id == first);
    CHECK(r.sites[0].orientation_ambiguous); // m == n: cuBLAS's own order kept
    REQUIRE(r.run_unmatched.size() == 3);
    const auto reason = [&](int64_t id) {
        for (const UnmatchedSite& u : r.run_unmatched)
            if (u.site_id == id)
                return u.reason;
        return std::string("(matched)");
    };
    CHECK_THAT(reason(only_here), Contains("the reference has no tensor site under this NVTX path"));
    CHECK_THAT(reason(second), Contains("the reference has 1 such site(s) under this path; this is #1 in step order"));
    CHECK_THAT(reason(other_shape), Contains("no GEMM of this shape"));
    REQUIRE(r.ref_unmatched.size() == 1);
    CHECK(r.ref_unmatched[0].site_id == ref_probe);
    CHECK_THAT(r.ref_unmatched[0].reason, Contains("the run has no probe of this name and role under this path"));
}

TEST_CASE(
    "drift: healthy noise and a one-step spike flag nothing; a persistent shift is found at its onset", "[compare]")
{
    constexpr int kSteps = 24;
    constexpr int kOnset = 12;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const std::string p = "step/blocks.0/fc1";
    const int64_t healthy = run.gemm(p, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t spiky = run.gemm(p, "64x256x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t planted = run.gemm(p, "64x512x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t ref_healthy = ref.gemm(p, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    const int64_t ref_spiky = ref.gemm(p, "64x256x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    const int64_t ref_planted = ref.gemm(p, "64x512x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < kSteps; ++i) {
        const double ref_amax = 4.0 * std::exp2(0.02 * i); // grows slowly, as activations do
        const double healthy_amax = ref_amax * std::exp2(noise(i));
        // The scale covers the previous step's amax with a little room: healthy delayed scaling.
        const double scale_inv = 4.2 * std::exp2(0.02 * i) / 448;
        run.sample(healthy, i, 0.1, schema::Dtype::E4M3, healthy_amax, scale_inv).saturated = i % 5 == 0 ? 1 : 0;
        ref.sample(ref_healthy, i, 0.1, schema::Dtype::BFloat16, ref_amax);
        const bool spike = i == kOnset;
        run.sample(spiky, i, 0.2, schema::Dtype::E4M3, spike ? 448 * scale_inv : healthy_amax, scale_inv).saturated
            = spike ? 500'000 : 0;
        ref.sample(ref_spiky, i, 0.2, schema::Dtype::BFloat16, spike ? ref_amax * 1000 : ref_amax);
        // Planted: from the onset the reference's amax doubles every step, the run's delayed scale stays a step
        // behind, so its codes clip at half the reference's amax and 400 elements saturate.
        const double grown = i < kOnset ? ref_amax : ref_amax * std::exp2(i - kOnset + 1);
        const double run_amax = i < kOnset ? healthy_amax : grown / 2;
        const double planted_scale_inv = i < kOnset ? scale_inv : run_amax / 448;
        run.sample(planted, i, 0.3, schema::Dtype::E4M3, run_amax, planted_scale_inv).saturated = i < kOnset ? 0 : 400;
        ref.sample(ref_planted, i, 0.3, schema::Dtype::BFloat16, grown);
    }
    const Compared c = compare_jobs(run, ref, "drift");
    const CompareResult& r = c.result();
    REQUIRE(r.sites.size() == 3);
    CHECK(site_with(r, healthy).drift.empty());
    CHECK(site_with(r, spiky).drift.empty());
    REQUIRE(r.flagged.size() == 1);
    const CompareSite& p_site = site_with(r, planted);
    REQUIRE(r.first_divergent);
    CHECK(r.sites[*r.first_divergent].run_site_id == planted);
    CHECK(p_site.onset_step == kOnset);
    REQUIRE(p_site.drift.size() >= 2);
    const DriftEvidence& ratio = p_site.drift[0];
    CHECK(ratio.series == "log2_amax_ratio");
    CHECK(ratio.onset_step == kOnset);
    CHECK(ratio.steps_before == kOnset);
    CHECK(ratio.steps_after == kSteps - kOnset);
    double before = 0;
    for (int i = 0; i < kOnset; ++i)
        before += noise(i);
    CHECK_THAT(ratio.mean_before, WithinAbs(before / kOnset, 1e-12));
    CHECK_THAT(ratio.mean_after, WithinAbs(-1.0, 1e-12));
    CHECK(ratio.statistic >= kDriftSigmas);
    CHECK(ratio.floor == kDriftFloorLog2);
    const DriftEvidence& saturation = p_site.drift[1];
    CHECK(saturation.series == "run_saturation");
    CHECK(saturation.onset_step == kOnset);
    CHECK_THAT(saturation.mean_after, WithinAbs(400e-6, 1e-15));
    // The spike is an amax-ratio event (|log2| > 1) and a stale scale, not a drift.
    CHECK(site_with(r, spiky).amax_ratio_events == 1);
    CHECK(site_with(r, spiky).stale_scale_events == 1);
    // The planted site's early baseline: the median of its first 5 steps' ratios.
    std::vector<double> first5 { noise(0), noise(1), noise(2), noise(3), noise(4) };
    std::ranges::sort(first5);
    CHECK_THAT(*p_site.baseline_log2_ratio, WithinAbs(first5[2], 1e-12));
    CHECK_THAT(*p_site.steps[kOnset].baseline_delta_log2_ratio, WithinAbs(-1.0 - first5[2], 1e-12));
}

TEST_CASE("first divergent: the earliest onset, then the earliest place in the step", "[compare]")
{
    constexpr int kSteps = 20;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    struct Planted {
        std::string path;
        double position;
        int onset;
        int64_t run_site = 0, ref_site = 0;
    };
    std::vector<Planted> planted { { "step/blocks.1/fc1", 0.5, 10 }, { "step/blocks.0/fc1", 0.1, 10 },
        { "step/blocks.3/fc1", 0.9, 8 } };
    for (Planted& p : planted) {
        p.run_site = run.gemm(p.path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
        p.ref_site = ref.gemm(p.path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    }
    for (int i = 0; i < kSteps; ++i)
        for (const Planted& p : planted) {
            const double run_amax = i < p.onset ? 4.0 * std::exp2(noise(i)) : 1.0;
            run.sample(p.run_site, i, p.position, schema::Dtype::E4M3, run_amax, 4.0 / 448);
            ref.sample(p.ref_site, i, p.position, schema::Dtype::BFloat16, 4.0);
        }
    const Compared c = compare_jobs(run, ref, "first");
    const CompareResult& r = c.result();
    REQUIRE(r.flagged.size() == 3);
    CHECK(r.sites[r.flagged[0]].run_site_id == planted[2].run_site); // onset 8
    CHECK(r.sites[r.flagged[1]].run_site_id == planted[1].run_site); // onset 10, position 0.1
    CHECK(r.sites[r.flagged[2]].run_site_id == planted[0].run_site); // onset 10, position 0.5
    CHECK(r.sites[*r.first_divergent].onset_step == 8);
    CHECK(r.sites[r.flagged[1]].position_in_step == 0.1);
}

TEST_CASE("the reference's distribution under the run's scale, headroom and stale scales", "[compare]")
{
    Job run, ref;
    run.steps(3);
    ref.steps(3);
    const int64_t run_site = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t ref_site = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < 3; ++i) {
        run.sample(run_site, i, 0.1, schema::Dtype::E4M3, 256.0, 1.0, 300);
        // 100 values in [2^-12, 2^-11), 100 in [1, 2), 100 in [256, 512): under scale 1 the first bin is below half
        // E4M3's smallest subnormal (2^-10) and the part of the last above 448 clips.
        TensorStatsRow& row = ref.sample(ref_site, i, 0.1, schema::Dtype::BFloat16, 500.0, std::nullopt, 300);
        row.hist_first_exponent = -12;
        row.exponent_histogram.assign(21, 0);
        row.exponent_histogram[0] = 100;
        row.exponent_histogram[12] = 100;
        row.exponent_histogram[20] = 100;
    }
    const Compared c = compare_jobs(run, ref, "distribution");
    const CompareSite& s = c.result().sites.at(0);
    REQUIRE(s.steps.size() == 3);
    const CompareStep& row = s.steps[1];
    CHECK_THAT(*row.ref_saturation_under_run_scale, WithinAbs((9 - std::log2(448.0)) / 3, 1e-12));
    CHECK_THAT(*row.ref_underflow_under_run_scale, WithinAbs(1.0 / 3, 1e-12));
    CHECK_THAT(*row.headroom_vs_ref_bits, WithinAbs(std::log2(448.0 / 500.0), 1e-12));
    CHECK_THAT(*row.run_headroom_bits, WithinAbs(std::log2(448.0 / 256.0), 1e-12));
    CHECK(row.stale_scale);
    CHECK(s.stale_scale_events == 3);
    CHECK(c.result().stale_scale_events == 3);
    REQUIRE(c.result().first_stale_scale_events.size() == 3);
    CHECK(c.result().first_stale_scale_events[0].step == 0);
}

namespace {

// `steps` steps of an FP8 run and its BF16 reference with one GEMM site sampled each step, and a "loss" scalar per
// step: the reference's 10 - 0.25 step, the run's run_loss(step, that).
template <class RunLoss> void loss_jobs(Job& run, Job& ref, int steps, RunLoss run_loss)
{
    run.steps(steps);
    ref.steps(steps);
    const int64_t rs = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t fs = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < steps; ++i) {
        run.sample(rs, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448);
        ref.sample(fs, i, 0.1, schema::Dtype::BFloat16, 1.0);
        const double loss = 10.0 - 0.25 * i;
        ref.s.scalar(ref.host, i * kStepNs + 900'000, "loss", loss, i);
        run.s.scalar(run.host, i * kStepNs + 900'000, "loss", run_loss(i, loss), i);
    }
}

} // namespace

TEST_CASE("loss delta: the mean of the last 10 common steps, with the largest single-step delta", "[compare]")
{
    constexpr int kSteps = 12;
    Job run, ref;
    loss_jobs(run, ref, kSteps, [](int i, double loss) { return loss * (i == 1 ? 1.05 : 1.004); });
    const Compared c = compare_jobs(run, ref, "loss");
    const LossComparison& loss = c.result().loss;
    CHECK(loss.unavailable.empty());
    CHECK(loss.scalar == "loss");
    REQUIRE(loss.steps.size() == kSteps);
    CHECK(loss.window == 10);
    CHECK_THAT(*loss.final_relative_delta, WithinAbs(0.004, 1e-12));
    CHECK(loss.max_step == 1);
    CHECK_THAT(*loss.max_step_relative_delta, WithinAbs(0.05, 1e-12));

    SECTION("without the scalar in the reference there is no loss delta, and its budget fails")
    {
        Job run2, ref2;
        run2.steps(4);
        ref2.steps(4);
        const int64_t a = run2.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
        const int64_t b = ref2.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
        for (int i = 0; i < 4; ++i) {
            run2.sample(a, i, 0.1, schema::Dtype::E4M3, 1.0, 1.0 / 448);
            ref2.sample(b, i, 0.1, schema::Dtype::BFloat16, 1.0);
            run2.s.scalar(run2.host, i * kStepNs + 900'000, "loss", 1.0, i);
        }
        const Compared c2 = compare_jobs(run2, ref2, "no-loss");
        CHECK_FALSE(c2.result().loss.final_relative_delta);
        CHECK_THAT(c2.result().loss.unavailable, Contains("in the compared steps of the reference"));
        const auto budgets = evaluate_compare_budgets(c2.result(), { .max_loss_delta = 1e-2, .max_drift_sites = 0 });
        REQUIRE(budgets.size() == 2);
        CHECK(budgets[0].name == "max-loss-delta");
        CHECK_FALSE(budgets[0].passed);
        CHECK_THAT(budgets[0].unavailable, Contains("reference"));
        CHECK(budgets[1].name == "max-drift-sites");
        CHECK(budgets[1].passed);
    }
}

TEST_CASE("a run whose loss goes NaN fails the loss budget, whatever its finite steps' delta", "[compare]")
{
    // 14 steps: the run's loss equals the reference's until step 9, then is NaN (step 10 on) and +Inf (step 13). The
    // last 10 common finite steps still have a delta of 0; before the fix the budget passed on them.
    constexpr int kSteps = 14;
    Job run, ref;
    loss_jobs(run, ref, kSteps, [](int i, double loss) {
        const double diverged = i == 13 ? std::numeric_limits<double>::infinity() : std::nan("");
        return i < 10 ? loss : diverged;
    });
    const Compared c = compare_jobs(run, ref, "loss");
    const LossComparison& loss = c.result().loss;
    REQUIRE(loss.final_relative_delta);
    CHECK(*loss.final_relative_delta == 0);
    CHECK(loss.run_nonfinite_steps == 4);
    CHECK(loss.first_run_nonfinite_step == 10);
    const auto budgets = evaluate_compare_budgets(c.result(), { .max_loss_delta = 1e-2, .max_drift_sites = {} });
    REQUIRE(budgets.size() == 1);
    CHECK_FALSE(budgets[0].passed);
    CHECK(budgets[0].worst_step == 10);
    CHECK(budgets[0].unavailable
        == "the run's 'loss' is NaN or Inf in 4 compared step(s), from step 10, where the reference's is finite");
    CHECK_FALSE(default_compare_verdict(c.result()).healthy());
}

TEST_CASE("the default verdict: no drifting site and the loss delta within kLossDeltaThreshold", "[compare]")
{
    CHECK(kDefaultCompareBudgets.max_loss_delta == kLossDeltaThreshold);
    CHECK(kDefaultCompareBudgets.max_drift_sites == 0);
    CompareResult r;
    r.loss.scalar = "loss";
    r.loss.window = 10;
    r.loss.final_relative_delta = kLossDeltaThreshold; // at the threshold passes
    r.loss.max_step = 7;
    r.loss.max_step_relative_delta = 0.03;
    CompareVerdict verdict = default_compare_verdict(r);
    CHECK(verdict.loss.name == "max-loss-delta");
    CHECK(verdict.loss.value == kLossDeltaThreshold);
    CHECK(verdict.loss.limit == kLossDeltaThreshold);
    CHECK(verdict.loss.worst_step == 7);
    CHECK(verdict.drift.name == "max-drift-sites");
    CHECK(verdict.drift.limit == 0);
    CHECK(verdict.healthy());

    SECTION("a loss delta above the threshold fails the loss, not the drift")
    {
        r.loss.final_relative_delta = 1.5 * kLossDeltaThreshold;
        verdict = default_compare_verdict(r);
        CHECK_FALSE(verdict.loss.passed);
        CHECK(verdict.drift.passed);
        CHECK_FALSE(verdict.healthy());
    }
    SECTION("no loss delta fails the loss, with the analyzer's reason")
    {
        r.loss.final_relative_delta.reset();
        r.loss.unavailable = "no scalar 'loss' in the reference";
        verdict = default_compare_verdict(r);
        CHECK_FALSE(verdict.loss.passed);
        CHECK(verdict.loss.unavailable == "no scalar 'loss' in the reference");
        CHECK_FALSE(verdict.healthy());
    }
    SECTION("one drifting site fails the drift and names the first divergent site")
    {
        CompareSite site;
        site.label = "step/blocks.0/fc1 · gemm 64x512x32 #0 · B";
        site.onset_step = 12;
        r.sites.push_back(site);
        r.flagged = { 0 };
        r.first_divergent = 0;
        verdict = default_compare_verdict(r);
        CHECK(verdict.loss.passed);
        CHECK_FALSE(verdict.drift.passed);
        CHECK(verdict.drift.value == 1);
        CHECK(verdict.drift.worst_step == 12);
        CHECK(verdict.drift.where == "first divergent: step/blocks.0/fc1 · gemm 64x512x32 #0 · B from step 12");
        CHECK_FALSE(verdict.healthy());
    }
}

TEST_CASE("FP8's net gain: GEMM time saved minus bookkeeping added, and the measured step change", "[compare]")
{
    Job run, ref;
    run.steps(5, { { kFp8Gemm, 100'000 }, { kCast, 20'000 } });
    ref.steps(5, { { kBf16Gemm, 200'000 } });
    one_steady_site(run, ref, 5);
    const Compared c = compare_jobs(run, ref, "gain");
    const PerformanceComparison& p = c.result().performance;
    CHECK(p.run.steps == 5);
    CHECK(p.run.kernels_per_step == 2);
    CHECK(p.ref.kernels_per_step == 1);
    CHECK(p.run.fp8_gemm_ns == 100'000);
    CHECK(p.run.gemm_ns == 100'000);
    CHECK(p.ref.gemm_ns == 200'000);
    CHECK(p.run.bookkeeping_ns == 20'000);
    CHECK(p.gemm_saved_ns == 100'000);
    CHECK(p.bookkeeping_added_ns == 20'000);
    CHECK(p.net_gain_ns == 80'000);
    CHECK(p.step_change_ns == 0); // both steps are 1 ms: marker to marker
    CHECK_THAT(p.run.bubble_ratio, WithinAbs(1 - 0.12, 1e-12));
    CHECK_THAT(p.ref.bubble_ratio, WithinAbs(1 - 0.2, 1e-12));
}

TEST_CASE("scaling recipe: static, current, delayed, and an outgrown delayed scale told apart by the cast's probe",
    "[compare]")
{
    constexpr int kSteps = 8;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [fixed, fixed_ref] = site("s/static");
    const auto [current, current_ref] = site("s/current");
    const auto [delayed, delayed_ref] = site("s/delayed");
    const auto [outgrown, outgrown_ref] = site("s/outgrown");
    const int64_t probe = run.s.tensor_site("input", schema::TensorRole::Input, schema::Dtype::BFloat16, 1, 64,
        schema::StatsSource::ExplicitProbe, "s/outgrown");
    for (int i = 0; i < kSteps; ++i) {
        const double amax = 2.0 + 0.1 * i;
        run.sample(fixed, i, 0.1, schema::Dtype::E4M3, amax, 0.01);
        run.sample(current, i, 0.2, schema::Dtype::E4M3, amax, amax / 448); // codes reach 448 every step
        run.sample(delayed, i, 0.3, schema::Dtype::E4M3, amax, (amax + 0.3) / 448); // headroom every step
        // The amax outgrows the delayed scale every step: the codes reach 448 (clipped), the probe of the cast's
        // input shows the true amax above fp8_max / scale.
        const double stale = (amax - 0.1) / 448;
        run.sample(outgrown, i, 0.4, schema::Dtype::E4M3, 448 * stale, stale);
        TensorStatsRow& p = run.sample(probe, i, 0.39, schema::Dtype::BFloat16, amax);
        p.scale = 1 / stale;
        p.scale_inv.reset();
        p.target_format = schema::Fp8Format::E4M3;
        for (const int64_t r : { fixed_ref, current_ref, delayed_ref, outgrown_ref })
            ref.sample(r, i, 0.5, schema::Dtype::BFloat16, amax);
    }
    const Compared c = compare_jobs(run, ref, "recipe");
    const CompareResult& r = c.result();
    CHECK(site_with(r, fixed).recipe == ScalingRecipe::Static);
    CHECK(site_with(r, current).recipe == ScalingRecipe::Current);
    CHECK_THAT(site_with(r, current).recipe_evidence, Contains("without a probe"));
    CHECK(site_with(r, delayed).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, outgrown).recipe == ScalingRecipe::Delayed);
    CHECK_THAT(site_with(r, outgrown).recipe_evidence, Contains("probed with the same scale"));
    CHECK(site_with(r, outgrown).logical_role == "activation");
    CHECK(r.static_sites == 1);
    CHECK(r.current_sites == 1);
    CHECK(r.delayed_sites == 2);
    CHECK(std::string(scaling_recipe_name(ScalingRecipe::Current)) == "current");
}

TEST_CASE("drift: a delayed scale that falls behind its amax in most steps is drift; sporadic new records and a "
          "current scale short of the reference are not",
    "[compare]")
{
    constexpr int kSteps = 24;
    constexpr int kOnset = 12;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [lagging, lagging_ref] = site("step/blocks.1/fc1");
    const auto [records, records_ref] = site("step/blocks.0/fc2");
    const auto [current, current_ref] = site("step/blocks.0/proj");
    double previous_true = 0;
    for (int i = 0; i < kSteps; ++i) {
        const double ref_amax = 4.0 * std::exp2(0.02 * i);
        // Healthy delayed scaling: the scale covers the amax with 0.14 bit of room.
        const double healthy_scale_inv = 4.4 * std::exp2(0.02 * i) / 448;
        // Planted: from the onset one feature grows 15% a step in both runs; the run's delayed scale, made from the
        // previous step's amax, falls log2(1.15) = 0.20 bit short every step. The codes clip at that scale (a few
        // elements, under the saturation floor), so the amax ratio is only -0.20 bit.
        const double true_amax = i < kOnset ? ref_amax : ref_amax * std::pow(1.15, i - kOnset + 1);
        const double lag_scale_inv = i < kOnset ? healthy_scale_inv : previous_true / 448;
        run.sample(lagging, i, 0.3, schema::Dtype::E4M3, std::min(true_amax, 448 * lag_scale_inv), lag_scale_inv)
            .saturated
            = i < kOnset ? 0 : 3;
        ref.sample(lagging_ref, i, 0.3, schema::Dtype::BFloat16, true_amax);
        previous_true = true_amax;
        // Healthy delayed scaling with a new record every 4th step: the reference's amax 0.3 bit beyond the scale.
        const double record = i % 4 == 3 ? ref_amax * std::exp2(0.3) * 4.4 / 4.0 : ref_amax;
        run.sample(records, i, 0.2, schema::Dtype::E4M3, std::min(record, 448 * healthy_scale_inv), healthy_scale_inv);
        ref.sample(records_ref, i, 0.2, schema::Dtype::BFloat16, record);
        // Current scaling: the scale follows the run's own amax; from the onset the reference's amax is 0.15 bit
        // above it (a stale burst by size in every step), which is the amax ratio's business, not a lagging scale.
        const double run_amax = ref_amax * std::exp2(noise(i));
        run.sample(current, i, 0.1, schema::Dtype::E4M3, run_amax, run_amax / 448);
        ref.sample(current_ref, i, 0.1, schema::Dtype::BFloat16, i < kOnset ? run_amax : run_amax * std::exp2(0.15));
    }
    const Compared c = compare_jobs(run, ref, "bursts");
    const CompareResult& r = c.result();
    CHECK(site_with(r, lagging).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, records).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, current).recipe == ScalingRecipe::Current);
    CHECK(site_with(r, records).drift.empty());
    CHECK(site_with(r, records).stale_scale_events == kSteps / 4);
    CHECK(site_with(r, current).drift.empty());
    CHECK(site_with(r, current).stale_scale_events == kSteps - kOnset);
    REQUIRE(r.flagged.size() == 1);
    const CompareSite& p = site_with(r, lagging);
    CHECK(r.sites[*r.first_divergent].run_site_id == lagging);
    CHECK(p.onset_step == kOnset);
    REQUIRE(p.drift.size() == 1);
    const DriftEvidence& e = p.drift[0];
    CHECK(e.series == "stale_scale_bursts");
    CHECK(e.onset_step == kOnset);
    CHECK(e.mean_before == 0.0);
    CHECK(e.mean_after == 1.0);
    CHECK(e.steps_before == kOnset);
    CHECK(e.steps_after == kSteps - kOnset);
    CHECK(e.floor == kDriftFloorBurstShare);
    CHECK(std::isinf(e.statistic)); // no step-to-step change before or after the onset
    // Short by one step's growth: 15% and the slow 0.02 bit of the healthy trend.
    CHECK_THAT(*p.steps[kOnset + 1].headroom_vs_ref_bits, WithinAbs(-std::log2(1.15) - 0.02, 1e-12));
    CHECK_THAT(*p.steps[kOnset + 1].log2_amax_ratio, WithinAbs(-std::log2(1.15) - 0.02, 1e-12));
}

TEST_CASE("drift: bursts must repeat: three at the end of the run are not drift", "[compare]")
{
    constexpr int kSteps = 12;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const int64_t rs = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t fs = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < kSteps; ++i) {
        const double scale_inv = 4.4 * std::exp2(0.02 * i) / 448;
        const double amax = 4.0 * std::exp2(0.02 * i) * (i >= kSteps - 3 ? 1.4 : 1.0); // 0.35 bit short, 3 times
        run.sample(rs, i, 0.1, schema::Dtype::E4M3, std::min(amax, 448 * scale_inv), scale_inv);
        ref.sample(fs, i, 0.1, schema::Dtype::BFloat16, amax);
    }
    const Compared c = compare_jobs(run, ref, "few-bursts");
    const CompareResult& r = c.result();
    CHECK(r.sites.at(0).recipe == ScalingRecipe::Delayed);
    CHECK(r.sites.at(0).stale_scale_events == 3);
    CHECK(r.flagged.empty()); // the share rises 0 -> 1, but kDriftMinBursts = 4 are needed
}

namespace {

// A histogram of `numel` nonzero elements: all but one in the bin of exponent `bulk`, one in the bin of `amax`.
void bulk_and_max(TensorStatsRow& row, int32_t bulk, double amax, uint64_t numel)
{
    const auto top = static_cast<int32_t>(std::floor(std::log2(amax)));
    row.hist_first_exponent = bulk;
    row.exponent_histogram.assign(static_cast<size_t>(top - bulk + 1), 0);
    row.exponent_histogram.front() += numel - 1;
    row.exponent_histogram.back() += 1;
}

} // namespace

TEST_CASE("drift: an amax that climbs away from its tensor's bulk is drift from the knee of the climb; a tensor "
          "that grows as a whole, or whose amax climbs 2 bits, is not",
    "[compare]")
{
    constexpr int kSteps = 24;
    constexpr int kOnset = 8;
    constexpr uint64_t kNumel = 1000;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [outlier, outlier_ref] = site("Model/blocks.1/fc1");
    const auto [whole, whole_ref] = site("Model/blocks.1/fc2");
    const auto [modest, modest_ref] = site("Model/blocks.0/fc2");
    // Current scaling (the scale from each step's own amax), the same amax in both runs: the reference's amax ratio
    // says nothing, and the reference has no histogram (no underflow figure).
    const auto sample = [&](int64_t run_site, int64_t ref_site, int i, double position, double amax, int32_t bulk) {
        TensorStatsRow& row
            = run.sample(run_site, i, position, schema::Dtype::E4M3, amax, amax / 448, static_cast<int64_t>(kNumel));
        bulk_and_max(row, bulk, amax, kNumel);
        ref.sample(ref_site, i, position, schema::Dtype::BFloat16, amax, std::nullopt, static_cast<int64_t>(kNumel));
    };
    for (int i = 0; i < kSteps; ++i) {
        const int grown = std::max(0, i - kOnset + 1);
        // One feature grows 1.6x a step from the onset; the bulk stays in [0.5, 1).
        sample(outlier, outlier_ref, i, 0.1, 4.0 * std::exp2(noise(i)) * std::pow(1.6, grown), -1);
        // Everything grows 1.6x a step: the bulk follows the amax, 3 binades below it.
        const double whole_amax = 4.0 * std::pow(1.6, grown);
        sample(whole, whole_ref, i, 0.5, whole_amax, static_cast<int32_t>(std::floor(std::log2(whole_amax))) - 3);
        // The amax climbs 2 bits and stays (a consequence downstream).
        sample(modest, modest_ref, i, 0.3, 4.0 * std::exp2(std::min(2.0, 0.25 * grown)), -1);
    }
    const Compared c = compare_jobs(run, ref, "dynamic-range");
    const CompareResult& r = c.result();
    const CompareSite& p = site_with(r, outlier);
    CHECK(p.recipe == ScalingRecipe::Current);
    // log2(amax) - log2(median): the median is the 500th of 1000 elements, in the bulk's bin of 999.
    const double median = -1 + 500.0 / 999.0;
    CHECK_THAT(*p.steps[0].run_dynamic_range_bits, WithinAbs(2 + noise(0) - median, 1e-12));
    CHECK(site_with(r, whole).drift.empty());
    CHECK(site_with(r, modest).drift.empty());
    REQUIRE(r.flagged.size() == 1);
    CHECK(r.sites[*r.first_divergent].run_site_id == outlier);
    REQUIRE(p.drift.size() == 1);
    const DriftEvidence& e = p.drift[0];
    CHECK(e.series == "run_dynamic_range_bits");
    // The mean shift alone would split the climb in its middle; the knee of the flat-then-linear fit is the onset.
    CHECK(e.onset_step == kOnset);
    CHECK(p.onset_step == kOnset);
    CHECK(e.steps_before == kOnset);
    CHECK(e.floor == kDriftFloorRangeBits);
    double before = 0;
    for (int i = 0; i < kOnset; ++i)
        before += 2 + noise(i) - median;
    CHECK_THAT(e.mean_before, WithinAbs(before / kOnset, 1e-12));
    CHECK(e.mean_after - e.mean_before >= kDriftFloorRangeBits);
    CHECK(e.statistic >= kDriftSigmas);
}

TEST_CASE(
    "drift: the reference's underflow under the run's scale must rise by 1 point and at least double", "[compare]")
{
    constexpr int kSteps = 16;
    constexpr int kOnset = 8;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [tail, tail_ref] = site("p/tail");
    const auto [flush, flush_ref] = site("p/flush");
    // The run's scale is 1 (E4M3): the reference's values in [2^-12, 2^-11) are below half the smallest subnormal
    // (2^-10) and flush to zero, those in [1, 2) do not. Per mille of 1000 elements below, before and from the onset.
    const auto sample = [&](int64_t run_site, int64_t ref_site, int i, uint64_t below) {
        run.sample(run_site, i, 0.1, schema::Dtype::E4M3, 1.5, 1.0, 1000);
        TensorStatsRow& row = ref.sample(ref_site, i, 0.1, schema::Dtype::BFloat16, 1.5, std::nullopt, 1000);
        row.hist_first_exponent = -12;
        row.exponent_histogram.assign(13, 0);
        row.exponent_histogram.front() = below;
        row.exponent_histogram.back() = 1000 - below;
    };
    for (int i = 0; i < kSteps; ++i) {
        // torchao's clean pair in the zoo (docs/accuracy.md "Scoreboard"): 8.3% -> 9.9%, a tail that moved a little.
        sample(tail, tail_ref, i, i < kOnset ? 83 : 99);
        // 2% -> 4.5%: more than doubled, by 2.5 points.
        sample(flush, flush_ref, i, i < kOnset ? 20 : 45);
    }
    const Compared c = compare_jobs(run, ref, "underflow");
    const CompareResult& r = c.result();
    CHECK_THAT(*site_with(r, tail).steps[kOnset].ref_underflow_under_run_scale, WithinAbs(0.099, 1e-12));
    CHECK(site_with(r, tail).drift.empty());
    REQUIRE(r.flagged.size() == 1);
    const CompareSite& f = site_with(r, flush);
    REQUIRE(f.drift.size() == 1);
    CHECK(f.drift[0].series == "ref_underflow_under_run_scale");
    CHECK(f.drift[0].onset_step == kOnset);
    CHECK_THAT(f.drift[0].mean_before, WithinAbs(0.02, 1e-12));
    CHECK_THAT(f.drift[0].mean_after, WithinAbs(0.045, 1e-12));
    CHECK_THAT(f.drift[0].floor, WithinAbs(0.02, 1e-12)); // the level before, above the 1-point floor
}

TEST_CASE(
    "scaling recipe: a constant amax at fp8_max / scale cannot tell current from static, and says so", "[compare]")
{
    constexpr int kSteps = 6;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::A, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::A, schema::Dtype::BFloat16) };
    };
    const auto [frozen, frozen_ref] = site("s/frozen");
    const auto [probed, probed_ref] = site("s/probed");
    const auto [clipped, clipped_ref] = site("s/clipped");
    const auto [fixed, fixed_ref] = site("s/fixed");
    const auto probe = [&](const std::string& path) {
        return run.s.tensor_site("weight", schema::TensorRole::Weight, schema::Dtype::BFloat16, 1, 64,
            schema::StatsSource::ExplicitProbe, path);
    };
    const int64_t probed_twin = probe("s/probed");
    const int64_t clipped_twin = probe("s/clipped");
    const auto probe_sample = [&](int64_t twin, int i, double amax, double scale_inv) {
        TensorStatsRow& p = run.sample(twin, i, 0.05, schema::Dtype::BFloat16, amax);
        p.scale = 1 / scale_inv;
        p.scale_inv.reset();
        p.target_format = schema::Fp8Format::E4M3;
    };
    for (int i = 0; i < kSteps; ++i) {
        // A frozen weight: its amax never changes, so a current scale never changes either.
        run.sample(frozen, i, 0.1, schema::Dtype::E4M3, 2.0, 2.0 / 448);
        // The same, with the cast's input probed: its amax is fp8_max / scale in every step.
        run.sample(probed, i, 0.2, schema::Dtype::E4M3, 2.0, 2.0 / 448);
        probe_sample(probed_twin, i, 2.0, 2.0 / 448);
        // A fixed scale that the amax outgrows: the codes clip at fp8_max, the probe shows the amax beyond it.
        run.sample(clipped, i, 0.3, schema::Dtype::E4M3, 1.5, 1.5 / 448);
        probe_sample(clipped_twin, i, 2.0, 1.5 / 448);
        // A fixed scale with room above a moving amax.
        run.sample(fixed, i, 0.4, schema::Dtype::E4M3, 2.0 + 0.1 * i, 0.01);
        for (const int64_t r : { frozen_ref, probed_ref, clipped_ref, fixed_ref })
            ref.sample(r, i, 0.5, schema::Dtype::BFloat16, 2.0);
    }
    const Compared c = compare_jobs(run, ref, "recipe-constant");
    const CompareResult& r = c.result();
    CHECK(site_with(r, frozen).recipe == ScalingRecipe::CurrentOrStatic);
    CHECK_THAT(site_with(r, frozen).recipe_evidence,
        Contains("the same scale in all 6 samples and the codes' amax at fp8_max / scale in each")
            && Contains("without a probe"));
    CHECK(site_with(r, probed).recipe == ScalingRecipe::CurrentOrStatic);
    CHECK_THAT(site_with(r, probed).recipe_evidence, Contains("the cast's input amax at fp8_max / scale"));
    CHECK(site_with(r, clipped).recipe == ScalingRecipe::Static);
    CHECK_THAT(site_with(r, clipped).recipe_evidence, Contains("not at fp8_max / scale in 6 of them"));
    CHECK(site_with(r, fixed).recipe == ScalingRecipe::Static);
    CHECK(r.current_or_static_sites == 2);
    CHECK(r.static_sites == 2);
    CHECK(r.current_sites == 0);
    CHECK(std::string(scaling_recipe_name(ScalingRecipe::CurrentOrStatic)) == "current or static");
    // Neither is stale-scale drift: a fixed scale that clips every step from the first is no change.
    CHECK(r.flagged.empty());
}

TEST_CASE("compare says in one line why drift and loss were not compared, and compares the performance", "[compare]")
{
    // What is left of each: the reason, no site, failing default budgets, and the performance of both runs.
    const auto not_compared = [](const Compared& c) {
        const CompareResult& r = c.result();
        CHECK_FALSE(r.numerics_compared());
        CHECK(r.numerics_not_compared.find('\n') == std::string::npos);
        CHECK(r.sites.empty());
        CHECK(r.flagged.empty());
        CHECK(r.loss.unavailable == r.numerics_not_compared);
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
