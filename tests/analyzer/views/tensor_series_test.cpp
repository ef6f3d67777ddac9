// The Tensors view's per-site series (docs/analysis.md "Queries for the viewer"): the reduction of a step's samples and
// each figure, exactly, on a scenario; and on a recorded pair, the run's series agree with compare's per-step amax.
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/views/tensor_series.hpp"
#include "tensor_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

TEST_CASE(
    "tensor series: one point per site and analysed step, samples reduced as compare reduces them", "[tensor_series]")
{
    Scenario s;
    const int64_t fc1 = probe_site(s, "fc1");
    const int64_t fc2 = probe_site(s, "fc2");
    TensorStatsRow a = healthy_sample(fc1, 5, 100); // amax 1.75 under scale_inv 1/64 (covers 7): headroom 2 bits
    a.underflows = 10;
    TensorStatsRow b = healthy_sample(fc1, 5, 200);
    b.amax = 3.5;
    b.saturated = 2;
    b.underflows = 30;
    b.nans = 1;
    s.tensor_stats(a);
    s.tensor_stats(b);
    s.tensor_stats(healthy_sample(fc1, 6, 1100));
    s.tensor_stats(healthy_sample(fc1, 9, 5000)); // not an analysed step
    TensorStatsRow other_device = healthy_sample(fc2, 6, 1200);
    other_device.device_id = 1;
    s.tensor_stats(other_device);
    const TraceModel model = write_and_load(s, "tensor-series");
    const StepSet steps = step_set(StepSource::Markers, 5, 2, 0, 1000);

    const std::vector<TensorSiteSeries> series = tensor_series(model, steps);
    REQUIRE(series.size() == 2);
    CHECK(series[0].site_id == fc1);
    CHECK(series[0].label == "fc1");
    REQUIRE(series[0].points.size() == 2);
    const TensorSeriesPoint& p5 = series[0].points[0];
    CHECK(p5.step == 5);
    CHECK(p5.samples == 2);
    CHECK(p5.timestamp_ns == 100);
    CHECK(p5.amax == 3.5);
    CHECK(p5.scale_inv == 1.0 / 64.0);
    CHECK(p5.saturation_ratio == 2.0 / 2000.0);
    CHECK(p5.underflow_ratio == 40.0 / 2000.0);
    CHECK(p5.headroom_bits == Approx(1.0)); // log2(448 / 64 / 3.5)
    CHECK(p5.nonfinite == 1);
    const TensorSeriesPoint& p6 = series[0].points[1];
    CHECK(p6.step == 6);
    CHECK(p6.samples == 1);
    CHECK(p6.headroom_bits == Approx(2.0));
    CHECK(p6.saturation_ratio == 0.0);

    SECTION("a device keeps only its samples")
    {
        const std::vector<TensorSiteSeries> device0 = tensor_series(model, steps, 0u);
        REQUIRE(device0.size() == 1);
        CHECK(device0[0].site_id == fc1);
        CHECK(tensor_series(model, steps, 1u).at(0).site_id == fc2);
    }
    SECTION("no analysed step, no series")
    {
        CHECK(tensor_series(model, StepSet {}).empty());
    }
}

TEST_CASE("tensor series: the run's amax per step is compare's amax_run for the matched site", "[tensor_series][real]")
{
    const TraceModel run = load_recorded("compare/h100-drift-fp8.sqlite");
    const TraceModel ref = load_recorded("compare/h100-drift-bf16.sqlite");
    const CompareOptions options;
    const Report run_report = analyze(run, options.report);
    const Report ref_report = analyze(ref, options.report);
    const auto outcome = compare_runs({ run, run_report, ref, ref_report }, options);
    REQUIRE(std::holds_alternative<CompareResult>(outcome));
    const CompareResult& result = std::get<CompareResult>(outcome);
    const std::vector<TensorSiteSeries> run_series = tensor_series(run, run_report.steps);
    const std::vector<TensorSiteSeries> ref_series = tensor_series(ref, ref_report.steps);
    REQUIRE_FALSE(result.sites.empty());
    size_t compared = 0;
    for (const CompareSite& site : result.sites) {
        const auto find = [](const std::vector<TensorSiteSeries>& all, int64_t id) {
            const auto it = std::ranges::find(all, id, &TensorSiteSeries::site_id);
            REQUIRE(it != all.end());
            return *it;
        };
        const TensorSiteSeries a = find(run_series, site.run_site_id);
        const TensorSiteSeries b = find(ref_series, site.ref_site_id);
        for (const CompareStep& step : site.steps) {
            const auto at = [&](const TensorSiteSeries& s) {
                const auto it = std::ranges::find(s.points, step.step, &TensorSeriesPoint::step);
                REQUIRE(it != s.points.end());
                return *it;
            };
            if (step.amax_run)
                CHECK(at(a).amax == *step.amax_run);
            if (step.amax_ref)
                CHECK(at(b).amax == *step.amax_ref);
            if (step.run_headroom_bits)
                CHECK(at(a).headroom_bits == Approx(*step.run_headroom_bits));
            ++compared;
        }
    }
    CHECK(compared > 0);
}
