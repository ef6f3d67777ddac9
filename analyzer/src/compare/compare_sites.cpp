// Compare: tensor sites of the run matched with the reference's and their per-step figures (the recipe:
// site_recipe.cpp) (docs/analysis.md "Compare").
#include "compare/compare_detail.hpp"
#include "compare/site_pairing.hpp"
#include "model/step_locator.hpp"

#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>
#include <unordered_map>

namespace fp8scope::analyzer::detail {
namespace {

namespace schema = fp8scope::schema;

// The fractions of the reference's elements above fp8_max and flushed to zero under the run's scale.
std::pair<double, double> clipped_fractions(const StepSample& ref, double scale_inv, double fp8_max)
{
    const HistogramShares shares = shares_under_scale(ref.histogram, ref.hist_first_exponent, scale_inv, fp8_max);
    return { shares.clipped, shares.flushed };
}

// log2 of the median magnitude of a sample's nonzero finite elements, from its exponent histogram: the bin holding
// the middle element, taken as log-uniform, so the median's fraction of the bin is its fraction of the bin's width.
std::optional<double> median_magnitude_log2(const StepSample& s)
{
    uint64_t total = 0;
    for (const uint64_t count : s.histogram)
        total += count;
    if (total == 0)
        return std::nullopt;
    const double half = static_cast<double>(total) / 2;
    double below = 0;
    for (size_t i = 0; i < s.histogram.size(); ++i) {
        const auto count = static_cast<double>(s.histogram[i]);
        if (count > 0 && below + count >= half)
            return static_cast<double>(s.hist_first_exponent) + static_cast<double>(i) + (half - below) / count;
        below += count;
    }
    return std::nullopt;
}

std::optional<double> median_of(std::vector<double> values)
{
    if (values.empty())
        return std::nullopt;
    std::ranges::sort(values);
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct GemmShape {
    int64_t m = 0, n = 0, k = 0;
};

std::optional<GemmShape> gemm_shape(std::string_view name)
{
    GemmShape g;
    const std::string text(name);
    char tail = 0;
    if (std::sscanf(text.c_str(), "gemm %ldx%ldx%ld%c", &g.m, &g.n, &g.k, &tail) != 3)
        return std::nullopt;
    return g;
}

std::string_view role_word(int32_t role)
{
    const std::string_view word = tensor_role_word(role);
    return word.empty() ? "other" : word;
}

// A site's identity across precisions, without the position among its like (the group), and how its role was
// normalised.
struct SiteIdentity {
    std::string group; // path, kind, canonical shape, batch, normalised role
    std::string role;
    bool swapped = false, ambiguous = false;
    bool gemm = false;
    bool unknown_position = false; // a GEMM sampled before its period was learned (ordinal -1)
};

SiteIdentity identity_of(const TraceModel& model, const TensorSite& site)
{
    SiteIdentity id;
    const std::string path(text_of(model, site.nvtx_path));
    const std::string_view name = text_of(model, site.name);
    const auto shape = static_cast<schema::StatsSource>(site.source) == schema::StatsSource::GemmInterception
        ? gemm_shape(name)
        : std::nullopt;
    if (shape) {
        id.gemm = true;
        id.unknown_position = site.ordinal < 0;
        GemmShape g = *shape;
        std::string role(role_word(site.role));
        // C = A·B is also C^T = B^T·A^T: one library's A is another's B. The canonical form has m <= n.
        if (g.m > g.n && (role == "A" || role == "B")) {
            std::swap(g.m, g.n);
            role = role == "A" ? std::string("B") : std::string("A"); // a move: GCC 12 warns (-Wrestrict) at a copy
            id.swapped = true;
        } else if (g.m > g.n) {
            std::swap(g.m, g.n);
        }
        id.ambiguous = g.m == g.n && (role == "A" || role == "B");
        id.role = role;
        id.group = fmt::format("{}\x1fgemm {}x{}x{} batch {}\x1f{}", path, g.m, g.n, g.k, site.batch, role);
        return id;
    }
    id.role = std::string(role_word(site.role));
    id.group = fmt::format("{}\x1f{}\x1f{}", path, name, id.role);
    return id;
}

struct Keyed {
    std::map<std::string, int64_t> by_key; // group + position rank -> site id
    std::map<std::string, size_t> group_sizes;
    std::map<int64_t, SiteIdentity> identity;
    std::map<int64_t, int64_t> rank;
    std::map<std::string, int> paths; // NVTX paths with a site
    std::vector<int64_t> unknown_position;
};

Keyed key_sites(const TraceModel& model, const SiteSamples& samples)
{
    Keyed keyed;
    std::map<std::string, std::vector<std::tuple<double, int32_t, int64_t>>> groups;
    for (const TensorSite& site : model.tensor_sites) {
        const auto found = samples.find(site.id);
        if (found == samples.end())
            continue;
        SiteIdentity id = identity_of(model, site);
        keyed.paths[std::string(text_of(model, site.nvtx_path))] += 1;
        if (id.unknown_position) {
            keyed.unknown_position.push_back(site.id);
        } else {
            std::vector<double> positions;
            for (const auto& [step, s] : found->second)
                positions.push_back(s.position);
            groups[id.group].emplace_back(median_of(std::move(positions)).value_or(0), site.ordinal, site.id);
        }
        keyed.identity.emplace(site.id, std::move(id));
    }
    // Same-shaped sites under one path are told apart by their order in the step, not by the collector's ordinal,
    // which counts per dtype: an FP8 GEMM and a BF16 GEMM of one shape under one path both have ordinal 0.
    for (auto& [group, members] : groups) {
        std::ranges::sort(members);
        keyed.group_sizes[group] = members.size();
        for (size_t r = 0; r < members.size(); ++r) {
            const int64_t id = std::get<2>(members[r]);
            keyed.rank[id] = static_cast<int64_t>(r);
            keyed.by_key.emplace(fmt::format("{}\x1f#{}", group, r), id);
        }
    }
    return keyed;
}

std::string unmatched_reason(
    const TraceModel& model, const TensorSite& site, const Keyed& mine, const Keyed& other, std::string_view other_name)
{
    const SiteIdentity& id = mine.identity.at(site.id);
    if (id.unknown_position)
        return "its position in the step is unknown (ordinal -1: sampled before the collector learned the GEMM "
               "period), so it cannot be paired";
    const std::string path(text_of(model, site.nvtx_path));
    if (!other.paths.contains(path))
        return fmt::format("the {} has no tensor site under this NVTX path", other_name);
    const auto group = other.group_sizes.find(id.group);
    if (group == other.group_sizes.end())
        return id.gemm ? fmt::format("the {} has no GEMM of this shape (m and n in either order) with this operand "
                                     "under this path",
                   other_name)
                       : fmt::format("the {} has no probe of this name and role under this path", other_name);
    return fmt::format("the {} has {} such site(s) under this path; this is #{} in step order", other_name,
        group->second, mine.rank.at(site.id));
}

const TensorSite* site_by_id(const TraceModel& model, int64_t id)
{
    const auto it = std::ranges::find(model.tensor_sites, id, &TensorSite::id);
    return it == model.tensor_sites.end() ? nullptr : &*it;
}

} // namespace

SiteMatching match_sites(
    const TraceModel& run, const SiteSamples& run_samples, const TraceModel& ref, const SiteSamples& ref_samples)
{
    const Keyed run_keys = key_sites(run, run_samples);
    const Keyed ref_keys = key_sites(ref, ref_samples);
    SiteMatching matching;
    std::map<int64_t, bool> ref_matched;
    const auto members = [](const Keyed& keyed) {
        std::map<std::string, std::vector<int64_t>> out;
        for (const auto& [key, id] : keyed.by_key)
            out[keyed.identity.at(id).group].push_back(id);
        for (auto& [group, ids] : out)
            std::ranges::sort(ids, {}, [&](int64_t id) { return keyed.rank.at(id); });
        return out;
    };
    const auto ref_groups = members(ref_keys);
    for (const auto& [group, run_ids] : members(run_keys)) {
        const auto other = ref_groups.find(group);
        if (other == ref_groups.end())
            continue;
        const std::vector<int64_t>& ref_ids = other->second;
        std::vector<std::vector<double>> cost(run_ids.size(), std::vector<double>(ref_ids.size(), 0));
        if (run_ids.size() > 1 || ref_ids.size() > 1)
            for (size_t i = 0; i < run_ids.size(); ++i)
                for (size_t j = 0; j < ref_ids.size(); ++j)
                    cost[i][j] = early_amax_cost(run_samples.at(run_ids[i]), ref_samples.at(ref_ids[j]));
        std::vector<std::pair<size_t, size_t>> pairs;
        if (run_ids.size() == ref_ids.size()) {
            const std::vector<size_t> order = pair_by_early_amax(cost);
            for (size_t i = 0; i < order.size(); ++i)
                pairs.emplace_back(i, order[i]);
        } else {
            pairs = pair_unequal(cost);
        }
        for (const auto& [i, j] : pairs) {
            const int64_t run_id = run_ids[i], ref_id = ref_ids[j];
            const SiteIdentity& a = run_keys.identity.at(run_id);
            const SiteIdentity& b = ref_keys.identity.at(ref_id);
            matching.pairs.push_back({ run_id, ref_id, a.role, a.swapped != b.swapped, a.ambiguous });
            ref_matched[ref_id] = true;
        }
    }
    std::ranges::sort(matching.pairs, {}, &SiteMatching::Pair::run_site);
    std::map<int64_t, bool> run_matched;
    for (const auto& p : matching.pairs)
        run_matched[p.run_site] = true;
    for (const auto& [id, identity] : run_keys.identity)
        if (!run_matched.contains(id))
            if (const TensorSite* site = site_by_id(run, id))
                matching.run_unmatched.push_back({ tensor_site_label(run, *site), id,
                    unmatched_reason(run, *site, run_keys, ref_keys, "reference") });
    for (const auto& [id, identity] : ref_keys.identity)
        if (!ref_matched.contains(id))
            if (const TensorSite* site = site_by_id(ref, id))
                matching.ref_unmatched.push_back(
                    { tensor_site_label(ref, *site), id, unmatched_reason(ref, *site, ref_keys, run_keys, "run") });
    return matching;
}

namespace {

// The site's early-step baselines and one-step events, once its steps are filled.
void finish_site_steps(CompareSite& site)
{
    // The site's own early steps are its baseline: the first kBaselineSteps (a quarter of short runs, at least 1).
    const size_t n = site.steps.size();
    const size_t first = std::clamp<size_t>(n / 4, 1, kBaselineSteps);
    std::vector<double> ratios, saturations;
    for (size_t i = 0; i < std::min(first, n); ++i) {
        if (site.steps[i].log2_amax_ratio)
            ratios.push_back(*site.steps[i].log2_amax_ratio);
        if (site.steps[i].run_saturation)
            saturations.push_back(*site.steps[i].run_saturation);
    }
    site.baseline_log2_ratio = median_of(std::move(ratios));
    site.baseline_saturation = median_of(std::move(saturations));
    for (CompareStep& row : site.steps) {
        if (row.log2_amax_ratio && site.baseline_log2_ratio)
            row.baseline_delta_log2_ratio = *row.log2_amax_ratio - *site.baseline_log2_ratio;
        if (row.run_saturation && site.baseline_saturation)
            row.baseline_delta_saturation = *row.run_saturation - *site.baseline_saturation;
        if (row.log2_amax_ratio && std::abs(*row.log2_amax_ratio) > kAmaxRatioEventLog2)
            ++site.amax_ratio_events;
        if (row.stale_scale)
            ++site.stale_scale_events;
    }
}

// One row per step both sides sampled, its figures filled by `figures(row, run sample, reference sample)`; then the
// site's baselines and events.
template <class Figures>
void fill_common_steps(CompareSite& site, const std::map<int64_t, StepSample>& run,
    const std::map<int64_t, StepSample>& ref, const Figures& figures)
{
    for (const auto& [step, r] : run) {
        const auto found = ref.find(step);
        if (found == ref.end())
            continue;
        CompareStep row;
        row.step = step;
        site.min_numel = site.min_numel == 0 ? r.numel : std::min(site.min_numel, r.numel);
        figures(row, r, found->second);
        site.steps.push_back(row);
    }
    finish_site_steps(site);
}

} // namespace

void fill_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref)
{
    fill_common_steps(site, run, ref, [](CompareStep& row, const StepSample& r, const StepSample& f) {
        if (std::isfinite(r.amax))
            row.amax_run = r.amax;
        if (std::isfinite(f.amax))
            row.amax_ref = f.amax;
        if (positive_finite(r.amax) && positive_finite(f.amax))
            row.log2_amax_ratio = std::log2(r.amax / f.amax);
        const std::optional<double> fp8_max = fp8_max_of(r);
        if (fp8_max && r.numel > 0) {
            row.run_saturation = static_cast<double>(std::max(r.saturated, r.overflows)) / static_cast<double>(r.numel);
            if (is_high_precision(r.dtype))
                row.run_underflow = static_cast<double>(r.underflows) / static_cast<double>(r.numel);
        }
        if (const auto median = median_magnitude_log2(r); median && positive_finite(r.amax))
            row.run_dynamic_range_bits = std::log2(r.amax) - *median;
        if (fp8_max && r.scale_inv) {
            if (positive_finite(r.amax))
                row.run_headroom_bits = std::log2(*fp8_max * *r.scale_inv / r.amax);
            if (positive_finite(f.amax)) {
                row.headroom_vs_ref_bits = std::log2(*fp8_max * *r.scale_inv / f.amax);
                row.stale_scale = *row.headroom_vs_ref_bits < kStaleScaleHeadroomBits;
            }
            if (!f.histogram.empty()) {
                const auto [over, under] = clipped_fractions(f, *r.scale_inv, *fp8_max);
                row.ref_saturation_under_run_scale = over;
                row.ref_underflow_under_run_scale = under;
            }
        }
    });
}

void fill_block_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref)
{
    fill_common_steps(site, run, ref, [](CompareStep& row, const StepSample& r, const StepSample& f) {
        if (std::isfinite(f.amax))
            row.amax_ref = f.amax;
        if (r.blocks) {
            const StepSample::Blocks& b = *r.blocks;
            if (std::isfinite(b.amax))
                row.amax_run = b.amax;
            if (positive_finite(b.amax) && positive_finite(f.amax))
                row.log2_amax_ratio = std::log2(b.amax / f.amax);
            if (positive_finite(b.amax) && positive_finite(b.p50))
                row.block_amax_spread_bits = std::log2(b.amax / b.p50);
            if (b.blocks > 0)
                row.subnormal_block_share = static_cast<double>(b.subnormal) / static_cast<double>(b.blocks);
        }
        if (const auto median = median_magnitude_log2(r); median && positive_finite(r.amax))
            row.run_dynamic_range_bits = std::log2(r.amax) - *median;
    });
}

} // namespace fp8scope::analyzer::detail
