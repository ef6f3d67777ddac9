// Compare on the real H100 pairs in samples/traces/compare/ (tests/gpu/check_compare.py recorded them; each
// <name>.truth.json is what the training sample printed): the clean FP8 + BF16 pair flags nothing, the planted pair
// (one feature of blocks.1.fc1's input growing 1.5x per step from step 14, in both precisions) names that activation
// first within 3 steps of the planting, and the loss delta is the one the printed losses give.
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "recorded_pair.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

nlohmann::json truth_of(const std::string& name)
{
    return recorded_truth("compare/" + name + ".truth.json");
}

using RealPair = RecordedPair;

RealPair compare_pair(const std::string& run, const std::string& ref)
{
    return compare_recorded("compare/" + run + ".sqlite", "compare/" + ref + ".sqlite");
}

// The loss delta as compare defines it, from the losses the two runs printed: the relative difference of the means
// over the last kLossWindowSteps of the steps compared (after the default 2 warm-up steps).
double printed_loss_delta(const nlohmann::json& run, const nlohmann::json& ref)
{
    const auto& a = run["losses"];
    const auto& b = ref["losses"];
    const size_t n = a.size();
    double x = 0, y = 0;
    for (size_t i = n - kLossWindowSteps; i < n; ++i) {
        x += a[i].get<double>();
        y += b[i].get<double>();
    }
    return std::abs(x - y) / std::abs(y);
}

} // namespace

TEST_CASE("real H100 pair, healthy FP8 against BF16: no site drifts, loss delta under 1e-2", "[compare][real]")
{
    const RealPair p = compare_pair("h100-clean-fp8", "h100-clean-bf16");
    const CompareResult& r = p.result;
    CHECK(r.alignment.run_source == StepSource::Markers);
    CHECK(r.alignment.common.size() == 28); // 30 steps, 2 warm-up
    CHECK(r.alignment.run_only.empty());
    CHECK(r.alignment.ref_only.empty());
    // 2 blocks x 4 Linear x 3 GEMMs x 3 operands + the BF16 LM head's 3 GEMMs x 3: every GEMM operand pairs; the
    // run's 24 probes of its FP8 casts (input, weight, grad_output per Linear) have no counterpart in BF16.
    CHECK(r.sites.size() == 81);
    CHECK(r.run_unmatched.size() == 24);
    CHECK(r.ref_unmatched.empty());
    CHECK(r.flagged.empty());
    CHECK_FALSE(r.first_divergent);
    CHECK(r.delayed_sites == 48);
    CHECK(r.current_sites == 0);
    REQUIRE(r.loss.final_relative_delta);
    CHECK(*r.loss.final_relative_delta < kLossDeltaThreshold);
    CHECK_THAT(*r.loss.final_relative_delta,
        WithinAbs(printed_loss_delta(truth_of("h100-clean-fp8"), truth_of("h100-clean-bf16")), 1e-9));
    const auto budgets = evaluate_compare_budgets(r, { .max_loss_delta = kLossDeltaThreshold, .max_drift_sites = 0 });
    REQUIRE(budgets.size() == 2);
    CHECK(budgets[0].passed);
    CHECK(budgets[1].passed);
    // The FP8 run has FP8 GEMMs and bookkeeping kernels; the BF16 reference has neither.
    CHECK(r.performance.run.fp8_gemm_ns > 0);
    CHECK(r.performance.run.bookkeeping_ns > 0);
    CHECK(r.performance.ref.fp8_gemm_ns == 0);
    CHECK(r.performance.run.kernels_per_step > r.performance.ref.kernels_per_step);
}

TEST_CASE("real H100 pair with a planted drift: the planted activation is the first divergent site", "[compare][real]")
{
    const RealPair p = compare_pair("h100-drift-fp8", "h100-drift-bf16");
    const nlohmann::json truth = truth_of("h100-drift-fp8");
    const int64_t planted_step = truth["planted_drift"]["from_step"].get<int64_t>();
    const std::string planted_site = truth["planted_drift"]["site"].get<std::string>();
    const CompareResult& r = p.result;
    REQUIRE(r.first_divergent);
    const CompareSite& first = r.sites[*r.first_divergent];
    INFO(first.label);
    CHECK_THAT(first.label, Contains("train_step/") && Contains(planted_site + " · gemm") && Contains("(activation)"));
    REQUIRE(first.onset_step);
    CHECK(std::abs(*first.onset_step - planted_step) <= 3);
    CHECK(first.recipe == ScalingRecipe::Delayed);
    bool ratio_evidence = false;
    for (const DriftEvidence& e : first.drift)
        ratio_evidence = ratio_evidence || (e.series == "log2_amax_ratio" && e.mean_after < -kDriftFloorLog2);
    CHECK(ratio_evidence); // the run's clipped amax falls behind the reference's
    // Nothing drifts before the planting.
    for (const size_t i : r.flagged)
        CHECK(*r.sites[i].onset_step >= planted_step);
    const auto budgets = evaluate_compare_budgets(r, { .max_loss_delta = std::nullopt, .max_drift_sites = 0 });
    REQUIRE(budgets.size() == 1);
    CHECK_FALSE(budgets[0].passed);
    CHECK_THAT(budgets[0].where, Contains(planted_site));
    CHECK(budgets[0].worst_step == first.onset_step);
    REQUIRE(r.loss.final_relative_delta);
    CHECK_THAT(*r.loss.final_relative_delta, WithinAbs(printed_loss_delta(truth, truth_of("h100-drift-bf16")), 1e-9));
}

TEST_CASE("real H100 current-scaling run: every FP8 site is named current scaling", "[compare][real]")
{
    const RealPair p = compare_pair("h100-current-fp8", "h100-clean-bf16");
    const CompareResult& r = p.result;
    CHECK(truth_of("h100-current-fp8")["scaling"] == "current");
    CHECK(r.alignment.common.size() == 10); // 12 steps against 30, 2 warm-up
    CHECK(r.alignment.ref_only.size() == 18);
    CHECK(r.current_sites == 48);
    CHECK(r.delayed_sites == 0);
}
