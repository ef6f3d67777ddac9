// Tensor health, the parts that locate single samples (docs/analysis.md "Tensor health"): the first non-finite
// sample (warm-up included), the scaling events (scale == FLT_MAX, amax == 0, stale scale) with their cap, the step
// rule for samples outside the analysed steps, a trace without tensor statistics, and the recorded demo trace.
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "tensor_test_support.hpp"

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::WithinAbs;

TEST_CASE("first non-finite: earliest step, then time, then site id, over every sample", "[tensor_health]")
{
    Scenario s;
    const int64_t low = probe_site(s, "low"), high = probe_site(s, "high");
    for (int64_t step = 5; step <= 9; ++step) {
        s.tensor_stats(healthy_sample(low, step, step * 1000 + 100));
        s.tensor_stats(healthy_sample(high, step, step * 1000 + 200));
    }
    TensorStatsRow row = healthy_sample(low, 7, 7900); // Inf in the lower site id, later in step 7
    row.infs = 1;
    s.tensor_stats(row);
    row = healthy_sample(high, 7, 7300); // NaN first in step 7
    row.nans = 4;
    s.tensor_stats(row);
    row = healthy_sample(low, 8, 6500); // numbered step 8, though enqueued earlier: the step decides
    row.nans = 1;
    s.tensor_stats(row);
    const TraceModel model = write_and_load(s, "tensor-first-nonfinite");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Markers, 5, 5, 5000, 1000));

    REQUIRE(h.first_nonfinite);
    CHECK(h.first_nonfinite->where.site_id == high);
    CHECK(h.first_nonfinite->where.site_label == "high");
    CHECK(h.first_nonfinite->where.step == 7);
    CHECK(h.first_nonfinite->where.in_analysed_steps);
    CHECK(h.first_nonfinite->where.timestamp_ns == 7300);
    CHECK(h.first_nonfinite->nans == 4);
    CHECK(h.first_nonfinite->infs == 0);
    CHECK(h.first_nonfinite->numel == 1000);
    CHECK(model.tensor_stats[h.first_nonfinite->where.sample_index].nans == 4);
    CHECK(h.totals.nonfinite_samples == 3);
    CHECK(site(h, low).nonfinite_samples == 2);
}

TEST_CASE("a NaN in a warm-up step is still the first non-finite sample", "[tensor_health]")
{
    Scenario s;
    const int64_t site = probe_site(s, "x");
    TensorStatsRow row = healthy_sample(site, 0, 500); // step 0: warm-up, not analysed
    row.nans = 1000;
    s.tensor_stats(row);
    row = healthy_sample(site, 3, 3500);
    row.infs = 2;
    row.amax = 0; // zeros and Infs: amax over finite elements is 0, but the tensor's amax is Inf, not 0
    s.tensor_stats(row);
    const TraceModel model = write_and_load(s, "tensor-warmup-nan");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Markers, 2, 3, 2000, 1000));
    REQUIRE(h.first_nonfinite);
    CHECK(h.first_nonfinite->where.step == 0);
    CHECK_FALSE(h.first_nonfinite->where.in_analysed_steps);
    CHECK(h.first_nonfinite->nans == 1000);
    CHECK(h.totals.nonfinite_samples == 2);
    CHECK(h.zero_amax.total == 0);
    CHECK(h.totals.samples == 2);
    CHECK(h.totals.samples_in_steps == 1);

    // Without step numbers (no markers), a sample before the first step has no step at all.
    Scenario t;
    const int64_t other = probe_site(t, "y");
    row = healthy_sample(other, std::nullopt, 500);
    row.nans = 1;
    t.tensor_stats(row);
    const TensorHealth u = analyze_tensor_health(
        write_and_load(t, "tensor-warmup-nan-unnumbered"), step_set(StepSource::Nvtx, 2, 3, 2000, 1000));
    REQUIRE(u.first_nonfinite);
    CHECK_FALSE(u.first_nonfinite->where.step);
    CHECK_FALSE(u.first_nonfinite->where.in_analysed_steps);
}

TEST_CASE("a NaN scale makes its sample non-finite, with no headroom and no zero-amax event", "[tensor_health]")
{
    // Trace format 1.4 keeps a NaN scale as NaN (it read as "unknown" before): a failed scale update, after which the
    // cast's output is NaN whatever the elements. FP8 codes dequantized by a NaN scale_inv leave amax 0.
    Scenario s;
    const int64_t x = probe_site(s, "x");
    for (int64_t step = 2; step <= 4; ++step)
        s.tensor_stats(healthy_sample(x, step, step * 1000 + 100));
    TensorStatsRow row = healthy_sample(x, 3, 3500);
    row.scale = std::nan("");
    row.scale_inv = std::nan("");
    row.amax = 0;
    s.tensor_stats(row);
    const TraceModel model = write_and_load(s, "tensor-nan-scale");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Markers, 2, 3, 2000, 1000));
    REQUIRE(h.first_nonfinite);
    CHECK(h.first_nonfinite->nan_scale);
    CHECK(h.first_nonfinite->where.step == 3);
    CHECK(h.first_nonfinite->where.timestamp_ns == 3500);
    CHECK(h.first_nonfinite->nans == 0);
    CHECK(h.totals.nonfinite_samples == 1);
    CHECK(site(h, x).nonfinite_samples == 1);
    CHECK(h.zero_amax.total == 0);
    CHECK(h.flt_max_scale.total == 0);
    const TensorSampleFigures f = tensor_sample_figures(model.tensor_stats[h.first_nonfinite->where.sample_index]);
    CHECK(f.nan_scale);
    CHECK_FALSE(f.headroom_bits);
    // The healthy samples keep their headroom: the NaN poisons nothing else.
    REQUIRE(site(h, x).min_headroom_bits);
    CHECK(std::isfinite(*site(h, x).min_headroom_bits));
}

TEST_CASE(
    "events: scale == FLT_MAX from either side, amax == 0 on a nonempty tensor, warm-up not counted", "[tensor_health]")
{
    Scenario s;
    const int64_t site = probe_site(s, "x");
    TensorStatsRow row = healthy_sample(site, 1, 1500);
    row.scale = FLT_MAX;
    row.scale_inv = 1.0 / FLT_MAX;
    s.tensor_stats(row);
    row = healthy_sample(site, 2, 2500);
    row.scale.reset();
    row.scale_inv = 1.0f / FLT_MAX; // as a float: rounded, still the fallback
    s.tensor_stats(row);
    row = healthy_sample(site, 3, 3500);
    row.scale = 1e38; // large, but a real scale
    row.scale_inv = 1e-38;
    s.tensor_stats(row);
    row = healthy_sample(site, 2, 2600);
    row.amax = 0;
    s.tensor_stats(row);
    row = healthy_sample(site, 3, 3600);
    row.amax = 0;
    row.numel = 0; // an empty tensor has amax 0 by definition
    s.tensor_stats(row);
    row = healthy_sample(site, 0, 500); // warm-up: the amax history is still filling
    row.amax = 0;
    row.scale = FLT_MAX;
    s.tensor_stats(row);
    const TensorHealth h
        = analyze_tensor_health(write_and_load(s, "tensor-events"), step_set(StepSource::Markers, 1, 3, 1000, 1000));

    REQUIRE(h.flt_max_scale.total == 2);
    CHECK(h.flt_max_scale.first[0].where.step == 1);
    CHECK(h.flt_max_scale.first[0].value == FLT_MAX);
    CHECK(h.flt_max_scale.first[1].where.step == 2);
    CHECK_THAT(h.flt_max_scale.first[1].value / FLT_MAX, WithinAbs(1.0, 1e-6));
    REQUIRE(h.zero_amax.total == 1);
    CHECK(h.zero_amax.first[0].where.step == 2);
    CHECK(h.zero_amax.first[0].where.timestamp_ns == 2600);
    CHECK(h.zero_amax.first[0].value == 0.0);
}

TEST_CASE("event lists keep the earliest 20 and count them all", "[tensor_health]")
{
    Scenario s;
    const int64_t site = probe_site(s, "x");
    for (int64_t i = 24; i >= 0; --i) { // written latest first: the order comes from the analysis
        TensorStatsRow row = healthy_sample(site, i, 1000 * i + 10);
        row.amax = 28; // 7 / 28: -2 bits
        s.tensor_stats(row);
    }
    const TensorHealth h
        = analyze_tensor_health(write_and_load(s, "tensor-event-cap"), step_set(StepSource::Markers, 0, 25, 0, 1000));
    CHECK(h.stale_scale.total == 25);
    REQUIRE(h.stale_scale.first.size() == kTensorEventsListed);
    for (size_t i = 0; i < kTensorEventsListed; ++i)
        CHECK(h.stale_scale.first[i].where.step == static_cast<int64_t>(i));
    CHECK(h.stale_scale.first[0].value == -2.0);
}

TEST_CASE("samples outside the analysed steps: by time, or by their own step with marker steps", "[tensor_health]")
{
    Scenario s;
    const int64_t site = probe_site(s, "x");
    // Steps [1000, 2000) and [3000, 4000) with a pause between them.
    s.tensor_stats(healthy_sample(site, 10, 900)); // before the first step
    s.tensor_stats(healthy_sample(site, 10, 1500));
    s.tensor_stats(healthy_sample(site, 10, 2500)); // in the pause
    s.tensor_stats(healthy_sample(site, 11, 3999));
    s.tensor_stats(healthy_sample(site, 11, 4000)); // at the end: outside ([start, end))
    const TraceModel model = write_and_load(s, "tensor-outside");
    StepSet by_time = step_set(StepSource::Nvtx, 10, 1, 1000, 1000);
    by_time.steps.push_back({ 11, 3000, 4000 });

    const TensorHealth h = analyze_tensor_health(model, by_time);
    CHECK(h.totals.samples == 5);
    CHECK(h.totals.samples_in_steps == 2);
    CHECK(h.totals.steps_with_samples == 2);
    CHECK(h.totals.samples_per_step == 1.0);
    CHECK(h.totals.sites == 1);
    CHECK(h.totals.sites_in_steps == 1);
    REQUIRE(h.sites.size() == 1);
    CHECK(h.sites[0].samples == 2);

    // The same steps from markers: the collector's step numbers decide, whatever the time.
    StepSet by_marker = by_time;
    by_marker.source = StepSource::Markers;
    const TensorHealth m = analyze_tensor_health(model, by_marker);
    CHECK(m.totals.samples_in_steps == 5);
    CHECK(m.sites[0].first_step == 10);
    CHECK(m.sites[0].last_step == 11);
    // Without an analysed step holding them: nothing per site, nothing ranked.
    const TensorHealth none = analyze_tensor_health(model, step_set(StepSource::Markers, 20, 2, 1000, 1000));
    CHECK(none.totals.samples_in_steps == 0);
    CHECK(none.sites.empty());
    CHECK(none.top_least_headroom.empty());
}

TEST_CASE("a trace without tensor statistics gives an empty result", "[tensor_health]")
{
    Scenario s;
    probe_site(s, "never sampled");
    const TensorHealth h
        = analyze_tensor_health(write_and_load(s, "tensor-none"), step_set(StepSource::Markers, 0, 3, 0, 1000));
    CHECK(h.totals.samples == 0);
    CHECK(h.totals.sites == 1);
    CHECK(h.totals.samples_per_step == 0.0);
    CHECK(h.sites.empty());
    CHECK(h.top_saturation.empty());
    CHECK(h.top_underflow.empty());
    CHECK(h.top_least_headroom.empty());
    CHECK_FALSE(h.first_nonfinite);
    CHECK(h.flt_max_scale.total + h.zero_amax.total + h.stale_scale.total == 0);
}

TEST_CASE("the report carries tensor health: the demo trace's last step, headroom 0, no underflow figure",
    "[tensor_health][sample]")
{
    // samples/traces/scenario-demo.sqlite: markers for steps 0..2 (warm-up 2 leaves step 2), an E4M3 weight and an
    // E5M2 gradient seen as FP8 codes, each with a scale made for exactly its amax.
    const Report report = analyze(load_recorded("scenario-demo.sqlite"));
    const TensorHealth& h = report.tensor_health;
    CHECK(h.totals.samples == 6);
    CHECK(h.totals.samples_in_steps == 2);
    REQUIRE(h.sites.size() == 2);
    CHECK(h.sites[0].label == "ProfilerStep/forward/layers.0 · layers.0.fc1.weight · weight");
    CHECK(h.sites[0].first_step == 2);
    CHECK(h.sites[0].worst_saturation_ratio == 0.0);
    CHECK(h.sites[0].underflow_samples == 0); // FP8 codes cannot show underflow
    for (const TensorSiteHealth& site : h.sites) {
        REQUIRE(site.min_headroom_bits);
        CHECK_THAT(*site.min_headroom_bits, WithinAbs(0.0, 1e-9));
    }
    CHECK(h.stale_scale.total == 0);
    CHECK_FALSE(h.first_nonfinite);
    CHECK(h.top_saturation.size() == 2);
    CHECK(h.top_underflow.empty());
}

TEST_CASE("with a device, only that device's samples count", "[tensor_health]")
{
    Scenario s;
    const int64_t site = probe_site(s, "x");
    s.tensor_stats(healthy_sample(site, 5, 5100)); // device 0, healthy
    TensorStatsRow row = healthy_sample(site, 6, 6100);
    row.device_id = 1;
    row.nans = 3; // the only NaN is on device 1
    s.tensor_stats(row);
    const TraceModel model = write_and_load(s, "tensor-device");
    const StepSet steps = step_set(StepSource::Markers, 5, 2, 5000, 1000);

    const TensorHealth all = analyze_tensor_health(model, steps);
    REQUIRE(all.first_nonfinite);
    CHECK(all.totals.samples_in_steps == 2);

    const TensorHealth device0 = analyze_tensor_health(model, steps, 10, 0u);
    CHECK_FALSE(device0.first_nonfinite);
    CHECK(device0.totals.nonfinite_samples == 0);
    CHECK(device0.totals.samples_in_steps == 1);
    CHECK(device0.totals.samples == 2); // the whole trace's count

    const TensorHealth device1 = analyze_tensor_health(model, steps, 10, 1u);
    REQUIRE(device1.first_nonfinite);
    CHECK(device1.first_nonfinite->where.step == 6);
}
