// The change-point test's evidence and its constants (docs/analysis.md "Compare: drift"): shared by compare's drift
// and the numerics verdict's climb.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fp8scope::analyzer {

// Change-point test: a shift is a drift when it is at least kDriftSigmas noise units (of the series' robust step-to-
// step noise, scaled for the segment sizes) and at least the series' practical floor, with at least
// kDriftMinStepsAfter steps from the onset on and kDriftMinStepsBefore before it.
inline constexpr double kDriftSigmas = 5.0;
inline constexpr int kDriftMinStepsBefore = 3;
inline constexpr int kDriftMinStepsAfter = 3;

// The evidence for one series of one site: the change point the test found.
struct DriftEvidence {
    // "log2_amax_ratio", "run_saturation", "stale_scale_bursts" (1 in a step where the run's scale falls short of the
    // reference's amax by at least kStaleBurstBits, else 0: the means are shares of steps),
    // "ref_underflow_under_run_scale", "run_dynamic_range_bits"; for sites scaled per row or block also
    // "block_amax_spread_bits" and "subnormal_block_share"
    std::string series;
    // The first step of the shifted segment; for run_dynamic_range_bits, which climbs rather than jumps, the knee of
    // the climb when the shift measured from there passes the test too (docs/analysis.md "Compare").
    int64_t onset_step = 0;
    double mean_before = 0, mean_after = 0;
    double noise = 0; // robust sigma of the series' step-to-step changes
    double statistic = 0; // |shift| / (noise * sqrt(1/n_before + 1/n_after)); infinite when the noise is 0
    double floor = 0; // the practical floor the shift had to reach (for the underflow share, at least its level before)
    int64_t steps_before = 0, steps_after = 0;
    // "outgrown_scale" (numerics.hpp's outgrown_scale() on the run's scale against the reference's amax: a delayed
    // scale that lags a growing amax): mean_before and mean_after are the shares of steps where the reference's amax
    // was beyond the run's scale, floor kOutgrownShortShare, statistic 0; these say by how much and how far the
    // amax grew.
    std::optional<double> shortfall_bits, amax_rise_bits;
};

} // namespace fp8scope::analyzer
