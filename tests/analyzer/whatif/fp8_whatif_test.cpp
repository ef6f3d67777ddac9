// The FP8 what-if's arithmetic (docs/analysis.md "FP8 what-if") on scenario traces whose figures are known by
// construction: launch-bound steps of 1 ms with 4 BF16 GEMMs of 40 us and 16 other kernels of 10 us, one launch every
// 50 us; a GEMM table in which a 40 us BF16 GEMM takes 20 us in FP8 (25 us rowwise); and BF16 operand histograms
// whose flushed shares under each per-tensor scale are exact.
#include "analysis_test_support.hpp"
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"
#include "tensor_samples.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kLaunchPeriodNs = 50'000;
constexpr int64_t kGemmNs = 40'000;
constexpr int64_t kOtherNs = 10'000;
constexpr int kSteps = 6;

// Steps of kStepNs from fp8scope.step() markers, each 20 launches kLaunchPeriodNs apart (a 5 us call, the kernel 2 us
// after it returns): GEMMs at positions 0, 5, 10 and 15, `gemm_name` each, other kernels between. The thread is never
// silent for more than 45 us, so every gap is `launch`; a last step with one kernel closes the last analysed one.
Scenario launch_bound(std::string_view gemm_name, std::string_view other_name = "elementwise_kernel")
{
    Scenario s;
    const HostThread host = s.thread(4242, 4242);
    for (int i = 0; i <= kSteps; ++i) {
        const int64_t t0 = i * kStepNs;
        s.step_marker(host, t0, i);
        for (int k = 0; k < (i == kSteps ? 1 : 20); ++k) {
            const int64_t call = t0 + k * kLaunchPeriodNs;
            const bool gemm = k % 5 == 0;
            s.launch(host, { .api_start_ns = call, .api_end_ns = call + 5'000 },
                { .start_ns = call + 7'000,
                    .end_ns = call + 7'000 + (gemm ? kGemmNs : kOtherNs),
                    .name = std::string(gemm ? gemm_name : other_name) });
        }
    }
    return s;
}

GemmTable twice_as_fast()
{
    return { "test GPU", "2026-11-27", "made up", { { 1024, 1024, 1024, kGemmNs, kGemmNs / 2, 25'000 } } };
}

Report analysed(const TraceModel& model)
{
    ReportOptions options;
    options.steps.warmup = 0;
    options.last_step = kSteps - 1; // not the closing step
    return analyze(model, options);
}

const Fp8Prediction& prediction(const Fp8WhatIf& w, std::string_view recipe, Fp8Mode mode)
{
    for (const Fp8Prediction& p : w.predictions)
        if (p.recipe == recipe && p.mode == mode)
            return p;
    FAIL("no prediction for " << recipe);
    throw 0;
}

const RecipeProfile& profile(std::string_view recipe)
{
    const RecipeProfile* found = find_recipe_profile(recipe);
    if (!found)
        FAIL("no profile " << recipe);
    return *found;
}

} // namespace

TEST_CASE("FP8 what-if: a launch-bound eager step grows by the recipe's host time per GEMM", "[whatif]")
{
    const TraceModel model = write_and_load(launch_bound(kBf16Gemm), "whatif-launch-bound");
    const Report report = analysed(model);
    const Fp8WhatIf w = predict_fp8(model, report, twice_as_fast());
    REQUIRE(w.not_applicable.empty());
    // The step's figures, by construction: 1 ms steps, 320 us busy, the rest launch idle, 20 kernels.
    CHECK(w.steps == kSteps);
    CHECK(w.bf16_step_ns == kStepNs);
    CHECK(report.totals.busy_ns == kSteps * 320'000);
    CHECK(report.totals.cause_ns[static_cast<size_t>(BubbleCause::Launch)] == kSteps * 680'000);
    CHECK(w.kernels_per_step == 20);
    CHECK(w.host_ns_per_kernel == 50'000); // (busy + launch idle) / kernels
    CHECK(w.gemm_kernels_per_step == 4);
    CHECK(w.gemm_ns_per_step == 160'000);
    // No GEMM statistics: every GEMM kernel would run in FP8.
    CHECK(w.fp8_gemms_per_step == 4);
    CHECK_THAT(w.fp8_gemm_source, Contains("every GEMM kernel"));

    const Fp8Prediction& delayed = prediction(w, "delayed", Fp8Mode::Eager);
    REQUIRE(delayed.unavailable.empty());
    CHECK(delayed.bf16_step_ns == kStepNs);
    CHECK(delayed.gemm_bf16_ns == 160'000);
    CHECK(delayed.gemm_fp8_ns == 80'000); // 4 GEMMs at half their time
    const double units = *profile("delayed").eager_host_units_per_gemm;
    const double host = 4 * units * 50'000;
    CHECK(delayed.bookkeeping_host_ns == std::llround(host));
    // 25 bookkeeping kernels per GEMM at the shortest kernel time: far under the host's time, so the host decides.
    CHECK(delayed.bookkeeping_gpu_ns == 4 * 25 * kMinBookkeepingKernelNs);
    CHECK(delayed.step_ns == std::llround(kStepNs + host));
    CHECK(delayed.step_low_ns == std::llround(kStepNs + host * (1 - kHostUnitsSpread)));
    CHECK(delayed.step_high_ns == std::llround(kStepNs + host * (1 + kHostUnitsSpread)));
    CHECK(delayed.speedup == Approx(static_cast<double>(kStepNs) / (kStepNs + host)));

    // torchao's rowwise recipe in eager mode: its own host units, and the table's rowwise column for its GEMMs.
    const Fp8Prediction& rowwise_eager = prediction(w, "rowwise", Fp8Mode::Eager);
    REQUIRE(rowwise_eager.unavailable.empty());
    CHECK(rowwise_eager.gemm_fp8_ns == 4 * 25'000);
    CHECK(
        rowwise_eager.bookkeeping_host_ns == std::llround(4 * *profile("rowwise").eager_host_units_per_gemm * 50'000));

    // Compiled: the CUDA-graph estimate of the BF16 step, with the 16 element-wise kernels (160 us a step) fused to
    // kInductorFusionFactor of their time, less the GEMM time saved; no operand sizes, no traffic.
    const int64_t graphed = estimate_what_if(report).without_launch_overhead_ns;
    CHECK(w.compiled.from_eager);
    CHECK(w.compiled.fused_ns == 16 * kOtherNs);
    CHECK(w.compiled.fused_kernels == 16);
    CHECK(w.compiled.kept_ns == 4 * kGemmNs);
    CHECK(w.compiled.attention_ns == 0);
    const int64_t compiled_bf16
        = std::llround(static_cast<double>(graphed) - (1 - kInductorFusionFactor) * 16 * kOtherNs);
    CHECK(w.compiled.step_ns == compiled_bf16);
    const Fp8Prediction& compiled = prediction(w, "tensorwise", Fp8Mode::Compiled);
    CHECK(compiled.bf16_step_ns == compiled_bf16);
    CHECK(compiled.step_ns == compiled_bf16 - 80'000);
    CHECK(compiled.bookkeeping_gpu_ns == 0);
    const Fp8Prediction& rowwise = prediction(w, "rowwise", Fp8Mode::Compiled);
    CHECK(rowwise.gemm_fp8_ns == 4 * 25'000); // the table's rowwise column
    CHECK(rowwise.step_ns == compiled_bf16 - 4 * (kGemmNs - 25'000));

    // The best is the largest speed-up: compiled tensorwise (or delayed, as fast), and FP8 pays off there.
    REQUIRE(w.best);
    CHECK(w.predictions[*w.best].mode == Fp8Mode::Compiled);
    CHECK(w.predictions[*w.best].step_ns == compiled_bf16 - 80'000);
    CHECK_THAT(w.advice, Contains("compiled: predicted"));
}

TEST_CASE("FP8 what-if: compiled from an eager trace, attention stays and runs longer, the optimizer stays", "[whatif]")
{
    // The same steps with FlashAttention kernels between the GEMMs: nothing for Inductor to fuse, and attention runs
    // kCompiledAttentionFactor times as long under compile.
    const TraceModel attention = write_and_load(
        launch_bound(
            kBf16Gemm, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>(Flash_fwd_params)"),
        "whatif-compiled-attention");
    const Report report = analysed(attention);
    const Fp8WhatIf w = predict_fp8(attention, report, twice_as_fast());
    REQUIRE(w.not_applicable.empty());
    const int64_t graphed = estimate_what_if(report).without_launch_overhead_ns;
    CHECK(w.compiled.from_eager);
    CHECK(w.compiled.attention_ns == 16 * kOtherNs);
    CHECK(w.compiled.fused_ns == 0);
    CHECK(w.compiled.step_ns
        == std::llround(static_cast<double>(graphed) + (kCompiledAttentionFactor - 1) * 16 * kOtherNs));
    // A fused optimizer's kernels stay as they are.
    const TraceModel optimizer
        = write_and_load(launch_bound(kBf16Gemm,
                             "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>"),
            "whatif-compiled-optimizer");
    const Report optimizer_report = analysed(optimizer);
    const Fp8WhatIf o = predict_fp8(optimizer, optimizer_report, twice_as_fast());
    CHECK(o.compiled.kept_ns == 4 * kGemmNs + 16 * kOtherNs);
    CHECK(o.compiled.fused_ns == 0);
    CHECK(o.compiled.step_ns == estimate_what_if(optimizer_report).without_launch_overhead_ns);
}

TEST_CASE("FP8 what-if: a GPU-bound step's host time per kernel comes from its API calls, not from the GPU", "[whatif]")
{
    // Steps of 1 ms: 10 kernels of 95 us back to back (GEMMs at 0 and 5), all launched in the step's first 100 us (a
    // 5 us call every 10 us), then a stream sync until the step ends. The GPU timeline gives 100 us per kernel; the
    // host spends 10 us on each launch, and its sync counts as a call's usual 5 us.
    Scenario s;
    const HostThread thread = s.thread(4242, 4242);
    for (int i = 0; i <= kSteps; ++i) {
        const int64_t t0 = i * kStepNs;
        s.step_marker(thread, t0, i);
        const int kernels = i == kSteps ? 1 : 10;
        for (int k = 0; k < kernels; ++k) {
            const int64_t call = t0 + k * 10'000;
            s.launch(thread, { .api_start_ns = call, .api_end_ns = call + 5'000 },
                { .start_ns = t0 + 10'000 + k * 95'000,
                    .end_ns = t0 + 10'000 + (k + 1) * 95'000,
                    .name = std::string(k % 5 == 0 ? kBf16Gemm : "elementwise_kernel") });
        }
        if (i < kSteps)
            s.sync(thread, t0 + 100'000, t0 + kStepNs, schema::SyncType::StreamSynchronize, 7);
    }
    const TraceModel model = write_and_load(s, "whatif-gpu-bound");
    const Report report = analysed(model);
    const Fp8WhatIf w = predict_fp8(model, report, twice_as_fast());
    REQUIRE(w.not_applicable.empty());
    CHECK(w.kernels_per_step == 10);
    // 10 launches of 10 us and the sync's usual 5 us, over 10 kernels: 10.5 us (the GPU's figure would be 100 us).
    // The window ends with the last analysed step's last launch and the silence after it, so that step's sync is
    // not in it: (60 x 10 us + 5 x 5 us) / 60.
    CHECK(w.host_ns_per_kernel == 10'417);
    // The host's extra time (2 GEMMs x units x 10.5 us) hides behind the GPU's 950 us: the GPU decides the step, less
    // the GEMM time FP8 saves, plus the bookkeeping kernels' time.
    const Fp8Prediction& delayed = prediction(w, "delayed", Fp8Mode::Eager);
    REQUIRE(delayed.unavailable.empty());
    const double host = 2 * *profile("delayed").eager_host_units_per_gemm * static_cast<double>(w.host_ns_per_kernel);
    CHECK(delayed.bookkeeping_host_ns == Approx(host).epsilon(1e-4));
    CHECK(10 * w.host_ns_per_kernel + host < 950'000);
    // The step less the GEMM time saved (the table halves a 95 us GEMM), plus the bookkeeping kernels; the step's
    // 1 ms holds a few us of idle around the sync that FP8 leaves as they are.
    const int64_t saved = 2 * (95'000 - 95'000 / 2);
    CHECK(delayed.step_ns == Approx(kStepNs - saved + delayed.bookkeeping_gpu_ns).epsilon(0.005));
    // Taking the GPU's 100 us per kernel for the host's would have added the host time to the whole step.
    CHECK(delayed.step_ns < kStepNs + host);
}

TEST_CASE("FP8 what-if: the sampled 2-D GEMMs are the ones that run in FP8, and their operands move bytes", "[whatif]")
{
    Scenario s = launch_bound(kBf16Gemm);
    // Two of the four GEMMs of each step sampled, A (2048 x 512) and B (512 x 1024) each: 2 a step in FP8.
    for (int g = 0; g < 2; ++g) {
        const std::string name = "gemm 2048x1024x512 #" + std::to_string(g);
        const int64_t a = s.tensor_site(
            name, schema::TensorRole::A, schema::Dtype::BFloat16, 2048, 512, schema::StatsSource::GemmInterception);
        const int64_t b = s.tensor_site(
            name, schema::TensorRole::B, schema::Dtype::BFloat16, 512, 1024, schema::StatsSource::GemmInterception);
        for (int i = 0; i < kSteps; ++i)
            for (const auto& [site, numel] : { std::pair { a, 2048 * 512 }, std::pair { b, 512 * 1024 } }) {
                TensorStatsRow row = healthy_sample(site, i, i * kStepNs + 10'000 + g * 1'000);
                row.target_format = schema::Fp8Format::None;
                row.numel = numel;
                s.tensor_stats(row);
            }
    }
    const TraceModel model = write_and_load(s, "whatif-sampled");
    const Fp8WhatIf w = predict_fp8(model, analysed(model), twice_as_fast());
    REQUIRE(w.not_applicable.empty());
    CHECK(w.fp8_gemms_per_step == 2);
    CHECK_THAT(w.fp8_gemm_source, Contains("2 a step, of 4 GEMM kernels"));
    const Fp8Prediction& delayed = prediction(w, "delayed", Fp8Mode::Eager);
    CHECK(delayed.gemm_bf16_ns == 80'000); // half the GEMM time
    CHECK(delayed.gemm_fp8_ns == 40'000);
    // Compiled: each FP8 GEMM's operands cast once, fused: (2048 x 512 + 512 x 1024) x 2 GEMMs x bytes per element.
    const double elements = 2.0 * (2048 * 512 + 512 * 1024);
    const Fp8Prediction& current = prediction(w, "current", Fp8Mode::Compiled);
    CHECK(current.bookkeeping_gpu_ns
        == std::llround(elements * profile("current").compiled_bytes_per_element / kCastBytesPerNs));
}

TEST_CASE("FP8 what-if: a run that is FP8 already, or has no GEMM, gets no prediction and says why", "[whatif]")
{
    const TraceModel fp8 = write_and_load(launch_bound(kFp8Gemm), "whatif-fp8");
    CHECK_THAT(predict_fp8(fp8, analysed(fp8)).not_applicable, Contains("already runs FP8 GEMMs"));
    const TraceModel none = write_and_load(launch_bound("elementwise_kernel"), "whatif-no-gemm");
    CHECK_THAT(predict_fp8(none, analysed(none)).not_applicable, Contains("no GEMM kernel"));
}

TEST_CASE(
    "FP8 what-if: a GEMM below the table is no faster, one inside it takes the median of its neighbours", "[whatif]")
{
    GemmTable table { "test GPU", "", "", {} };
    for (const auto& [bf16, fp8] :
        { std::pair { 100'000, 50'000 }, { 150'000, 100'000 }, { 180'000, 60'000 }, { 1'000'000, 500'000 } })
        table.rows.push_back({ 1, 1, 1, bf16, fp8, std::nullopt });
    // Under half the fastest row: nothing known.
    const GemmSpeedup below = gemm_speedup(table, 40'000, false);
    CHECK(below.median == 1);
    CHECK(below.rows == 0);
    // 120 us: the rows from 60 to 240 us (speed-ups 2, 1.5, 3): median 2, quartiles 1.75 and 2.5.
    const GemmSpeedup inside = gemm_speedup(table, 120'000, false);
    CHECK(inside.rows == 3);
    CHECK(inside.median == Approx(2.0));
    CHECK(inside.low == Approx(1.75));
    CHECK(inside.high == Approx(2.5));
    // 450 us: no row within a factor of 2; the nearest (1 ms) stands alone.
    CHECK(gemm_speedup(table, 450'000, false).median == Approx(2.0));
    CHECK(gemm_speedup(table, 450'000, false).rows == 1);
    // No rowwise column: nothing is known.
    CHECK(gemm_speedup(table, 120'000, true).rows == 0);
}

TEST_CASE(
    "FP8 what-if: the share of a BF16 operand each per-tensor scale flushes, and a delayed scale that lags", "[whatif]")
{
    Scenario s = launch_bound(kBf16Gemm);
    const int64_t site = s.tensor_site("gemm 2048x1024x512 #0", schema::TensorRole::A, schema::Dtype::BFloat16, 2048,
        512, schema::StatsSource::GemmInterception);
    // 100 values in [2^-20, 2^-19), 900 in [256, 512); amax 112, then 448, 448: under a current E4M3 scale (amax to
    // 448) the 100 small ones flush (10%); under E5M2 (amax to 57344, 7 bits higher) none do. The delayed scale of step
    // 1 comes from step 0's amax 112, four times too small: the 900 large values clip.
    const double amaxes[] = { 112, 448, 448 };
    for (int i = 0; i < 3; ++i) {
        TensorStatsRow row = healthy_sample(site, i, i * kStepNs + 10'000);
        row.target_format = schema::Fp8Format::None;
        row.amax = amaxes[i];
        row.hist_first_exponent = -20;
        row.exponent_histogram.assign(29, 0);
        row.exponent_histogram.front() = 100;
        row.exponent_histogram.back() = 900; // exponent 8
        s.tensor_stats(row);
    }
    const TraceModel model = write_and_load(s, "whatif-numerics");
    const Fp8WhatIf w = predict_fp8(model, analysed(model), twice_as_fast());
    REQUIRE(w.operands.size() == 1);
    const OperandNumerics& o = w.operands.front();
    CHECK(o.steps == 3);
    CHECK(o.e4m3_flushed == Approx(0.1));
    CHECK(o.e4m3_flushed_max == Approx(0.1));
    CHECK(o.e5m2_flushed == 0);
    REQUIRE(o.delayed_clipped_max);
    CHECK(*o.delayed_clipped_max == Approx(0.9));
    REQUIRE(o.delayed_flushed);
    CHECK(*o.delayed_flushed == Approx(0.1));
    REQUIRE(w.hurt.size() == 1);
    CHECK_THAT(w.hurt.front(), Contains("gemm 2048x1024x512 #0"));
}
