// Compare: the change-point test that tells drift from noise (docs/analysis.md "Compare: drift").
//
// A series over steps drifts when it splits into an earlier and a later segment whose means differ (1) by at least
// the series' practical floor, (2) by at least kDriftSigmas standard errors of the series' own step-to-step noise,
// and (3) persistently: at least half of the later steps lie beyond the midpoint of the two means. The split is the
// one that maximises |shift| * sqrt(k (n - k) / n), the likelihood-ratio statistic of a single mean shift in Gaussian
// noise. A one-step spike fails (3); healthy noise fails (1) or (2).
#include "compare_detail.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

namespace fp8scope::analyzer::detail {
namespace {

// Robust sigma of the step-to-step noise: the median absolute first difference, scaled to a Gaussian's sigma
// (1.4826 MAD) and divided by sqrt(2) since a difference of two noisy values has twice the variance. A single
// change point moves only one difference, so it barely moves this.
double noise_of(const std::vector<double>& values)
{
    std::vector<double> diffs;
    for (size_t i = 1; i < values.size(); ++i)
        diffs.push_back(std::abs(values[i] - values[i - 1]));
    if (diffs.empty())
        return 0;
    auto middle = diffs.begin() + static_cast<std::ptrdiff_t>(diffs.size() / 2);
    std::nth_element(diffs.begin(), middle, diffs.end());
    return 1.4826 * *middle / std::sqrt(2.0);
}

double mean_of(const std::vector<double>& values, size_t from, size_t to)
{
    double sum = 0;
    for (size_t i = from; i < to; ++i)
        sum += values[i];
    return sum / static_cast<double>(to - from);
}

} // namespace

std::optional<DriftEvidence> change_point(const std::string& series, const std::vector<int64_t>& steps,
    const std::vector<double>& values, int direction, double floor)
{
    const size_t n = values.size();
    const auto before_min = static_cast<size_t>(kDriftMinStepsBefore);
    const auto after_min = static_cast<size_t>(kDriftMinStepsAfter);
    if (n < before_min + after_min || steps.size() != n)
        return std::nullopt;
    size_t best = 0;
    double best_score = -1, best_shift = 0;
    for (size_t k = before_min; k + after_min <= n; ++k) {
        const double shift = mean_of(values, k, n) - mean_of(values, 0, k);
        if ((direction > 0 && shift <= 0) || (direction < 0 && shift >= 0))
            continue;
        const double kk = static_cast<double>(k), nn = static_cast<double>(n);
        const double score = std::abs(shift) * std::sqrt(kk * (nn - kk) / nn);
        if (score > best_score) {
            best = k;
            best_score = score;
            best_shift = shift;
        }
    }
    if (best_score < 0 || std::abs(best_shift) < floor)
        return std::nullopt;
    DriftEvidence e;
    e.series = series;
    e.onset_step = steps[best];
    e.mean_before = mean_of(values, 0, best);
    e.mean_after = mean_of(values, best, n);
    e.noise = noise_of(values);
    e.floor = floor;
    e.steps_before = static_cast<int64_t>(best);
    e.steps_after = static_cast<int64_t>(n - best);
    const double standard_error = e.noise
        * std::sqrt(1.0 / static_cast<double>(e.steps_before) + 1.0 / static_cast<double>(e.steps_after));
    e.statistic = standard_error > 0 ? std::abs(best_shift) / standard_error : std::numeric_limits<double>::infinity();
    if (e.statistic < kDriftSigmas)
        return std::nullopt;
    const double midpoint = (e.mean_before + e.mean_after) / 2;
    size_t beyond = 0;
    for (size_t i = best; i < n; ++i)
        beyond += best_shift > 0 ? values[i] > midpoint : values[i] < midpoint;
    if (2 * beyond < n - best)
        return std::nullopt;
    return e;
}

void detect_drift(CompareSite& site)
{
    struct Series {
        const char* name;
        std::optional<double> (*value)(const CompareStep&);
        int direction;
        double floor;
    };
    // The run's scale falling short of the reference's amax is what clips; headroom that shrinks but stays above 0
    // clips nothing, so the series is the shortfall max(0, -headroom_vs_ref_bits).
    const Series all[] = {
        { "log2_amax_ratio", [](const CompareStep& r) { return r.log2_amax_ratio; }, 0, kDriftFloorLog2 },
        { "run_saturation", [](const CompareStep& r) { return r.run_saturation; }, +1, kDriftFloorSaturation },
        { "scale_shortfall_vs_ref_bits",
            [](const CompareStep& r) {
                return r.headroom_vs_ref_bits ? std::optional<double>(std::max(0.0, -*r.headroom_vs_ref_bits))
                                              : std::nullopt;
            },
            +1, kDriftFloorLog2 },
        { "ref_underflow_under_run_scale", [](const CompareStep& r) { return r.ref_underflow_under_run_scale; }, +1,
            kDriftFloorUnderflow },
    };
    for (const Series& s : all) {
        std::vector<int64_t> steps;
        std::vector<double> values;
        for (const CompareStep& row : site.steps)
            if (const auto v = s.value(row); v && std::isfinite(*v)) {
                steps.push_back(row.step);
                values.push_back(*v);
            }
        // Saturation's floor is also at least 8 elements of the smallest sample, so that a handful of elements
        // landing on fp8_max (healthy delayed scaling puts the max element there) is never a drift.
        double floor = s.floor;
        if (std::string_view(s.name) == "run_saturation" && site.min_numel > 0)
            floor = std::max(floor, 8.0 / static_cast<double>(site.min_numel));
        if (auto evidence = change_point(s.name, steps, values, s.direction, floor))
            site.drift.push_back(std::move(*evidence));
    }
    for (const DriftEvidence& e : site.drift)
        if (!site.onset_step || e.onset_step < *site.onset_step)
            site.onset_step = e.onset_step;
}

} // namespace fp8scope::analyzer::detail
