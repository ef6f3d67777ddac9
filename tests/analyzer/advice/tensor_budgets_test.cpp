// The tensor budgets of `fp8scope check` (docs/analysis.md "Budgets"): max-saturation and max-underflow on the
// worst single sample in the analysed steps, naming its step and site; no-nonfinite on every sample, naming the
// first; and all three failing, with a reason, when the trace has no tensor statistics to judge.
#include "fp8scope/analyzer/advice/budgets.hpp"
#include "tensor_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// A report holding only tensor health, over steps 3 and 4 ([1000, 2000), [2000, 3000)) from markers.
Report tensor_report(const Scenario& s, const std::string& name)
{
    Report report;
    report.steps = step_set(StepSource::Markers, 3, 2, 1000, 1000);
    report.tensor_health = analyze_tensor_health(write_and_load(s, name), report.steps);
    return report;
}

Budgets tensor_budgets(double max_saturation, double max_underflow)
{
    Budgets budgets;
    budgets.max_saturation = max_saturation;
    budgets.max_underflow = max_underflow;
    budgets.no_nonfinite = true;
    return budgets;
}

// Sites "a" and "b"; b's step-4 sample saturates 2% and underflows 5%; a's warm-up sample (step 2) would be worse.
Scenario saturating_scenario()
{
    Scenario s;
    const int64_t a = probe_site(s, "a"), b = probe_site(s, "b");
    for (int64_t step = 3; step <= 4; ++step) {
        TensorStatsRow row = healthy_sample(a, step, step * 1000 - 1900);
        row.saturated = 10;
        row.underflows = 10;
        s.tensor_stats(row);
        row = healthy_sample(b, step, step * 1000 - 1800);
        row.saturated = step == 4 ? 20 : 0;
        row.underflows = step == 4 ? 50 : 0;
        s.tensor_stats(row);
    }
    TensorStatsRow warmup = healthy_sample(a, 2, 500);
    warmup.saturated = 900;
    warmup.underflows = 900;
    s.tensor_stats(warmup);
    return s;
}

} // namespace

TEST_CASE("max-saturation and max-underflow judge the worst sample in the steps and name its step and site",
    "[budgets][tensor_health]")
{
    const Report report = tensor_report(saturating_scenario(), "budget-saturation");
    auto results = evaluate_budgets(report, tensor_budgets(0.02, 0.05));
    REQUIRE(results.size() == 3);
    CHECK(results[0].name == "max-saturation");
    CHECK(results[0].value == 0.02);
    CHECK(results[0].worst_value == 0.02);
    CHECK(results[0].worst_step == 4);
    CHECK(results[0].where == "b");
    CHECK(results[0].passed); // at the limit holds
    CHECK(results[1].name == "max-underflow");
    CHECK(results[1].value == 0.05);
    CHECK(results[1].where == "b");
    CHECK(results[1].passed);
    CHECK(results[2].name == "no-nonfinite");
    CHECK(results[2].value == 0.0);
    CHECK(results[2].passed);
    CHECK(results[2].where.empty());
    for (const BudgetResult& r : results)
        CHECK(r.unavailable.empty());

    results = evaluate_budgets(report, tensor_budgets(0.019, 0.049));
    CHECK_FALSE(results[0].passed);
    CHECK_FALSE(results[1].passed);
}

TEST_CASE("tensor budget ties go to the lowest site id", "[budgets][tensor_health]")
{
    Scenario s;
    const int64_t a = probe_site(s, "a"), b = probe_site(s, "b");
    for (const int64_t site_id : { b, a }) {
        TensorStatsRow row = healthy_sample(site_id, 3, 1000 + site_id);
        row.saturated = 30;
        s.tensor_stats(row);
    }
    const auto results = evaluate_budgets(tensor_report(s, "budget-tie"), tensor_budgets(0.5, 0.5));
    CHECK(results[0].where == "a");
    CHECK(results[0].value == 0.03);
}

TEST_CASE(
    "no-nonfinite counts samples with NaN/Inf over the whole trace and names the first", "[budgets][tensor_health]")
{
    Scenario s = saturating_scenario();
    const int64_t c = probe_site(s, "c");
    TensorStatsRow row = healthy_sample(c, 1, 100); // warm-up
    row.nans = 2;
    row.infs = 1;
    s.tensor_stats(row);
    row = healthy_sample(c, 4, 2100);
    row.infs = 7;
    s.tensor_stats(row);
    const auto results = evaluate_budgets(tensor_report(s, "budget-nonfinite"), tensor_budgets(1, 1));
    const BudgetResult& r = results[2];
    CHECK_FALSE(r.passed);
    CHECK(r.value == 2.0);
    CHECK(r.limit == 0.0);
    CHECK(r.worst_step == 1);
    CHECK(r.worst_value == 3.0);
    CHECK(r.where == "c");
    CHECK(r.unavailable.empty());
}

TEST_CASE("without tensor statistics the tensor budgets fail with the reason", "[budgets][tensor_health]")
{
    Scenario none;
    probe_site(none, "never sampled");
    for (const BudgetResult& r : evaluate_budgets(tensor_report(none, "budget-no-stats"), tensor_budgets(1, 1))) {
        INFO(r.name);
        CHECK_FALSE(r.passed);
        CHECK(r.unavailable == "the trace has no tensor statistics");
    }

    // Statistics only in warm-up: nothing to judge in the steps; the whole-trace NaN check still runs (and holds).
    Scenario warmup;
    warmup.tensor_stats(healthy_sample(probe_site(warmup, "x"), 0, 100));
    auto results = evaluate_budgets(tensor_report(warmup, "budget-warmup-only"), tensor_budgets(1, 1));
    CHECK(results[0].unavailable == "no tensor statistics in the analysed steps");
    CHECK(results[1].unavailable == "no tensor statistics in the analysed steps");
    CHECK(results[2].passed);

    // FP8 codes only: saturation is judged, underflow cannot be.
    Scenario codes;
    TensorStatsRow row = healthy_sample(probe_site(codes, "x"), 3, 1500);
    row.dtype = schema::Dtype::E4M3;
    codes.tensor_stats(row);
    results = evaluate_budgets(tensor_report(codes, "budget-codes-only"), tensor_budgets(1, 1));
    CHECK(results[0].passed);
    CHECK_FALSE(results[1].passed);
    CHECK(results[1].unavailable.starts_with("no tensor sample in the analysed steps can show underflow"));
}

TEST_CASE("timeline budgets alone give no tensor results", "[budgets][tensor_health]")
{
    Budgets budgets;
    budgets.max_bubble_ratio = 0.5;
    const auto results = evaluate_budgets(Report {}, budgets);
    REQUIRE(results.size() == 1);
    CHECK(results[0].name == "max-bubble-ratio");
    CHECK(results[0].where.empty());
}
