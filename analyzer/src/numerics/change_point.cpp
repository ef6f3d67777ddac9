// The change-point test that tells drift from noise (docs/analysis.md "Compare: drift").
//
// A series over steps drifts when it splits into an earlier and a later segment whose means differ (1) by at least
// the series' practical floor, (2) by at least kDriftSigmas standard errors of the series' own step-to-step noise,
// and (3) persistently: at least half of the later steps lie beyond the midpoint of the two means. The split is the
// one that maximises |shift| * sqrt(k (n - k) / n), the likelihood-ratio statistic of a single mean shift in Gaussian
// noise. A one-step spike fails (3); healthy noise fails (1) or (2).
#include "numerics/change_point.hpp"

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

// The test of one split: the series' values from index `split` on against those before it. `relative_floor`: the
// shift must also be at least this many times the level before (|mean before|).
std::optional<DriftEvidence> test_split(const std::string& series, const std::vector<int64_t>& steps,
    const std::vector<double>& values, size_t split, double floor, double relative_floor)
{
    const size_t n = values.size();
    DriftEvidence e;
    e.series = series;
    e.onset_step = steps[split];
    e.mean_before = mean_of(values, 0, split);
    e.mean_after = mean_of(values, split, n);
    e.noise = noise_of(values);
    e.floor = std::max(floor, relative_floor * std::abs(e.mean_before));
    e.steps_before = static_cast<int64_t>(split);
    e.steps_after = static_cast<int64_t>(n - split);
    const double shift = e.mean_after - e.mean_before;
    if (std::abs(shift) < e.floor || shift == 0)
        return std::nullopt;
    const double standard_error
        = e.noise * std::sqrt(1.0 / static_cast<double>(e.steps_before) + 1.0 / static_cast<double>(e.steps_after));
    e.statistic = standard_error > 0 ? std::abs(shift) / standard_error : std::numeric_limits<double>::infinity();
    if (e.statistic < kDriftSigmas)
        return std::nullopt;
    const double midpoint = (e.mean_before + e.mean_after) / 2;
    size_t beyond = 0;
    for (size_t i = split; i < n; ++i)
        beyond += shift > 0 ? values[i] > midpoint : values[i] < midpoint;
    if (2 * beyond < n - split)
        return std::nullopt;
    return e;
}

} // namespace

// The knee of a climb: the index k (kDriftMinStepsBefore <= k <= last) of the least-squares fit of
// x_i = a + b * max(0, i - k + 1), flat before step k and rising linearly from it. The earliest k wins a tie.
size_t knee_of(const std::vector<double>& values, size_t last)
{
    const size_t n = values.size();
    size_t best = last;
    double best_rss = std::numeric_limits<double>::infinity();
    for (size_t k = static_cast<size_t>(kDriftMinStepsBefore); k <= last && k < n; ++k) {
        double sh = 0, shh = 0, sv = 0, shv = 0;
        for (size_t i = 0; i < n; ++i) {
            const double h = i + 1 > k ? static_cast<double>(i + 1 - k) : 0.0;
            sh += h;
            shh += h * h;
            sv += values[i];
            shv += h * values[i];
        }
        const double nn = static_cast<double>(n);
        const double det = nn * shh - sh * sh;
        if (det <= 0)
            continue;
        const double b = (nn * shv - sh * sv) / det;
        const double a = (sv - b * sh) / nn;
        double rss = 0;
        for (size_t i = 0; i < n; ++i) {
            const double h = i + 1 > k ? static_cast<double>(i + 1 - k) : 0.0;
            rss += (values[i] - a - b * h) * (values[i] - a - b * h);
        }
        if (rss < best_rss) {
            best_rss = rss;
            best = k;
        }
    }
    return best;
}

std::optional<DriftEvidence> change_point(const std::string& series, const std::vector<int64_t>& steps,
    const std::vector<double>& values, int direction, double floor, double relative_floor)
{
    const size_t n = values.size();
    const auto before_min = static_cast<size_t>(kDriftMinStepsBefore);
    const auto after_min = static_cast<size_t>(kDriftMinStepsAfter);
    if (n < before_min + after_min || steps.size() != n)
        return std::nullopt;
    size_t best = 0;
    double best_score = -1;
    for (size_t k = before_min; k + after_min <= n; ++k) {
        const double shift = mean_of(values, k, n) - mean_of(values, 0, k);
        if ((direction > 0 && shift <= 0) || (direction < 0 && shift >= 0))
            continue;
        const double kk = static_cast<double>(k), nn = static_cast<double>(n);
        const double score = std::abs(shift) * std::sqrt(kk * (nn - kk) / nn);
        if (score > best_score) {
            best = k;
            best_score = score;
        }
    }
    if (best_score < 0)
        return std::nullopt;
    return test_split(series, steps, values, best, floor, relative_floor);
}

std::optional<DriftEvidence> climb_onset(
    const std::string& series, const std::vector<int64_t>& steps, const std::vector<double>& values, double floor)
{
    auto evidence = change_point(series, steps, values, +1, floor);
    if (!evidence)
        return std::nullopt;
    // The mean shift splits a climb in its middle; the climb starts at its knee. The knee is the onset when the shift
    // measured from there passes the same test.
    const auto split = static_cast<size_t>(evidence->steps_before);
    const size_t knee = knee_of(values, split);
    if (knee < split)
        if (auto from_knee = test_split(series, steps, values, knee, floor, 0);
            from_knee && from_knee->mean_after > from_knee->mean_before)
            return from_knee;
    return evidence;
}

} // namespace fp8scope::analyzer::detail
