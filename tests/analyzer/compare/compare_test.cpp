// Compare (docs/analysis.md "Compare"): scenario pairs written through the real writer and loaded back, one rule per
// test, with exact expected numbers: matching across dtypes, A/B normalisation, unmatched sites, first-divergent
// ordering, the reference's distribution under the run's scale, the loss delta, the default verdict and FP8's net
// gain. The drift test and the scaling recipe are in compare_drift_test.cpp, FP8's price and the performance-only
// compare in compare_price_test.cpp, the performance per step in compare_performance_test.cpp.
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
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
    "a GEMM that added C in one run only leaves its same-shaped partner unmatched, the rest pair in order", "[compare]")
{
    // Inductor fuses a residual add into the compiled BF16 reference's second GEMM (addmm, beta 1): the collector
    // names it "gemm MxNxK + C", so the reference's same-shaped group is one short. The run's outputs pair with the
    // reference's whose early amaxes fit (1 with 1, 16 with 16), not by rank alone (4 with 16), and its second is
    // unmatched.
    Job run, ref;
    run.steps(6);
    ref.steps(6);
    const std::string p = "train_step";
    const int64_t run_1 = run.gemm(p, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t run_4 = run.gemm(p, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t run_16 = run.gemm(p, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t ref_1 = ref.gemm(p, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t ref_c = ref.gemm(p, "64x32x16 + C", schema::TensorRole::D, schema::Dtype::BFloat16);
    const int64_t ref_16 = ref.gemm(p, "64x32x16", schema::TensorRole::D, schema::Dtype::BFloat16);
    for (int i = 0; i < 6; ++i) {
        run.sample(run_1, i, 0.2, schema::Dtype::BFloat16, 1.0);
        run.sample(run_4, i, 0.4, schema::Dtype::BFloat16, 4.0);
        run.sample(run_16, i, 0.6, schema::Dtype::BFloat16, 16.0);
        ref.sample(ref_1, i, 0.2, schema::Dtype::BFloat16, 1.0);
        ref.sample(ref_c, i, 0.4, schema::Dtype::BFloat16, 20.0);
        ref.sample(ref_16, i, 0.6, schema::Dtype::BFloat16, 16.0);
    }
    const Compared c = compare_jobs(run, ref, "adds-c");
    const CompareResult& r = c.result();
    REQUIRE(r.sites.size() == 2);
    CHECK(site_with(r, run_1).ref_site_id == ref_1);
    CHECK(site_with(r, run_16).ref_site_id == ref_16);
    REQUIRE(r.run_unmatched.size() == 1);
    CHECK(r.run_unmatched[0].site_id == run_4);
    CHECK_THAT(r.run_unmatched[0].reason, Contains("the reference has 2 such site(s) under this path"));
    REQUIRE(r.ref_unmatched.size() == 1);
    CHECK(r.ref_unmatched[0].site_id == ref_c);
    CHECK(r.flagged.empty());
}

TEST_CASE(
    "drift: healthy noise and a one-step spike flag nothing, a persistent shift is found at its onset", "[compare]")
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
