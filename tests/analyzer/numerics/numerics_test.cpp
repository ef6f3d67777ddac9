// The numerics verdict of one trace (docs/analysis.md "Numerics verdict"): the outgrown-scale test on series whose
// answer is known by construction, and the verdict on real traces whose jobs printed what they planted
// (samples/traces/zoo/<name>.truth.json): a planted overflow is broken at its site and step, a slow drift is at risk at
// its planted input near its onset, a clean run is healthy, a BF16 run has no verdict; sites that read one FP8 tensor
// are one tensor.
#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "recorded_pair.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

struct Series {
    std::vector<int64_t> steps;
    std::vector<std::optional<double>> headroom, log2_amax;
};

// A delayed scale (amax history) over an amax that is flat to `onset`, then grows `growth` a step; the amax wobbles by
// a deterministic ±4% so that the scale also meets records before the onset now and then.
Series delayed_series(int steps, int onset, double growth, int history)
{
    Series s;
    std::vector<double> amax;
    for (int i = 0; i < steps; ++i) {
        const double wobble = 1.0 + 0.04 * std::sin(1.7 * i);
        amax.push_back(wobble * (i < onset ? 1.0 : std::pow(growth, i - onset + 1)));
    }
    for (int i = 0; i < steps; ++i) {
        s.steps.push_back(i);
        s.log2_amax.push_back(std::log2(amax[static_cast<size_t>(i)]));
        if (i == 0) {
            s.headroom.push_back(std::nullopt);
            continue;
        }
        double scale_amax = 0; // the max over the history before this step
        for (int j = std::max(0, i - history); j < i; ++j)
            scale_amax = std::max(scale_amax, amax[static_cast<size_t>(j)]);
        s.headroom.push_back(std::log2(scale_amax / amax[static_cast<size_t>(i)]));
    }
    return s;
}

Report report_of(const TraceModel& model)
{
    return analyze(model, ReportOptions {});
}

} // namespace

TEST_CASE("outgrown_scale: a delayed scale behind a growing amax, from near the climb's knee", "[numerics]")
{
    const Series grow = delayed_series(24, 10, 1.12, 8);
    const auto o = outgrown_scale(grow.steps, grow.headroom, grow.log2_amax);
    REQUIRE(o);
    CHECK(std::abs(o->onset_step - 10) <= 1);
    CHECK(o->short_share >= kOutgrownShortShare);
    CHECK(o->mean_shortfall_bits == Approx(std::log2(1.12)).margin(0.06));
    CHECK(o->amax_rise_bits >= kOutgrownRiseBits);
    CHECK(o->worst_bits < 0);
}

TEST_CASE("outgrown_scale: none for a flat amax, a slow weight-like growth or too few steps", "[numerics]")
{
    const Series flat = delayed_series(24, 100, 1.0, 8);
    CHECK_FALSE(outgrown_scale(flat.steps, flat.headroom, flat.log2_amax));
    // 2% a step: the scale is short in every step, by 0.03 bit: below kOutgrownBits.
    const Series slow = delayed_series(30, 2, 1.02, 8);
    CHECK_FALSE(outgrown_scale(slow.steps, slow.headroom, slow.log2_amax));
    const Series short_run = delayed_series(4, 1, 1.5, 8);
    CHECK_FALSE(outgrown_scale(short_run.steps, short_run.headroom, short_run.log2_amax));
    // Mismatched lengths are no answer, not a crash.
    CHECK_FALSE(outgrown_scale({ 1, 2, 3 }, { -1.0, -1.0 }, { 0.0, 1.0, 2.0 }));
}

TEST_CASE("verdict: the planted overflow is broken at its site and step, read by two GEMMs", "[numerics][real][zoo]")
{
    const TraceModel model = load_recorded("zoo/fp8_planted_overflow.sqlite");
    const nlohmann::json truth = recorded_truth("zoo/fp8_planted_overflow.truth.json");
    const Report r = report_of(model);
    const NumericsJudgement& n = r.numerics;
    REQUIRE(n.verdict == NumericsVerdict::Broken);
    const NumericsFinding& lead = *n.lead();
    const nlohmann::json& planted = truth.at("planted_overflow");
    CHECK(lead.module == planted.at("site").get<std::string>());
    CHECK(lead.onset_step == planted.at("step").get<int64_t>());
    CHECK(lead.rule == NumericsRule::Clipping);
    CHECK(lead.role == "input");
    CHECK(lead.value > 0.9);
    // The forward GEMM's input and the weight-gradient GEMM that reuses it: one tensor, two readers.
    CHECK(lead.read_by.size() == 2);
    CHECK(n.tensors < n.sites);
}

TEST_CASE("verdict: slow drifts are at risk at the planted input near the onset, clean runs are healthy",
    "[numerics][real][zoo]")
{
    for (const char* name :
        { "fp8_slow_drift_fc2", "fp8_slow_drift_qkv", "fp8_slow_drift_proj", "fp8_delayed_drift" }) {
        INFO(name);
        const nlohmann::json truth = recorded_truth(std::string("zoo/") + name + ".truth.json");
        const Report r = report_of(load_recorded(std::string("zoo/") + name + ".sqlite"));
        REQUIRE(r.numerics.verdict == NumericsVerdict::AtRisk);
        const auto planted = std::ranges::find_if(r.numerics.findings, [&](const NumericsFinding& f) {
            return f.module == truth.at("drift").at("layer").get<std::string>() && f.role == "input"
                && f.rule == NumericsRule::OutgrownScale;
        });
        REQUIRE(planted != r.numerics.findings.end());
        CHECK(std::abs(planted->onset_step - truth.at("drift").at("onset_step").get<int64_t>()) <= 3);
    }
    for (const char* name : { "fp8_slow_clean", "fp8_delayed_clean", "fp8_current_clean", "torchao_tensorwise_clean",
             "zero_code_pair_fp8", "deepseek_blockwise_clean" }) {
        INFO(name);
        const Report r = report_of(load_recorded(std::string("zoo/") + name + ".sqlite"));
        CHECK(r.numerics.verdict == NumericsVerdict::Healthy);
        CHECK(r.numerics.findings.empty());
        CHECK(r.numerics.tensors > 0);
    }
}

TEST_CASE("verdict: a BF16 run has no verdict, and says why", "[numerics][real][zoo]")
{
    const Report r = report_of(load_recorded("zoo/bf16_slow_clean_ref.sqlite"));
    CHECK(r.numerics.verdict == NumericsVerdict::NoData);
    CHECK(r.numerics.no_data == "no FP8 tensor statistics in the analysed steps");
    CHECK(r.numerics.tensors == 0);
}

TEST_CASE("FP8 tensors: a zero-code run's forward and backward readers of one operand are one tensor",
    "[numerics][real][zoo]")
{
    const TraceModel model = load_recorded("zoo/zero_code_pair_fp8.sqlite");
    const Report r = report_of(model);
    const std::vector<Fp8Tensor> tensors = find_fp8_tensors(model, r.steps);
    REQUIRE_FALSE(tensors.empty());
    size_t code_sites = 0;
    for (const Fp8Tensor& t : tensors) {
        code_sites += t.code_sites.size();
        CHECK(std::ranges::is_sorted(t.code_sites));
    }
    // Every operand is read twice (forward, and dgrad or wgrad): fewer tensors than code sites.
    CHECK(tensors.size() < code_sites);
}
