// The numerics verdict of one trace (docs/analysis.md "Numerics verdict"). Per FP8 tensor, a series over its sampled
// steps, read from its probe where it has one (the values before the cast: what clips, what flushes, how far the
// scale falls short) and from its codes otherwise (where clipping shows only as a pile-up at the format's max):
// - nonfinite: NaN or Inf in any of its samples: broken;
// - clipping: a share of its values clipped to the format's max, broken from kBrokenClipShare, at risk from
//   kAtRiskClipShare in kAtRiskClipSteps sampled steps;
// - flushing: a share of its nonzero values flushed to zero under the scale, the same way;
// - outgrown_scale: the amax beyond the scale's reach in kOutgrownSteps consecutive sampled steps: at risk;
// - amax_climb: a forward tensor's amax climbing kClimbBits from its baseline: at risk.
#include "fp8scope/analyzer/numerics/numerics.hpp"

#include "numerics/change_point.hpp"
#include "numerics/fp8_tensors.hpp"
#include "tensors/site_samples.hpp"

#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <unordered_map>

namespace fp8scope::analyzer {
namespace {

using detail::SiteSamples;
using detail::StepSample;

// One step of a tensor, from its probe when the probe was sampled then, else from its first code site sampled then.
struct TensorStep {
    int64_t step = 0;
    std::optional<double> clip, flush, headroom_bits;
    std::optional<double> amax;
    int64_t nonfinite = 0;
    double position = 0;
};

double median_of(std::vector<double> v)
{
    std::ranges::nth_element(v, v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2));
    return v[v.size() / 2];
}

double share(int64_t count, int64_t numel)
{
    return numel > 0 ? static_cast<double>(count) / static_cast<double>(numel) : 0.0;
}

// The codes at max as clipped values: only when they pile up there (kPileUpShare of the top octave's codes).
std::optional<double> code_clip(const StepSample& s)
{
    const auto top = std::find_if(s.histogram.rbegin(), s.histogram.rend(), [](uint64_t c) { return c > 0; });
    if (top == s.histogram.rend() || s.numel <= 0)
        return std::nullopt;
    const int64_t at_max = std::max(s.saturated, s.overflows);
    if (static_cast<double>(at_max) < kPileUpShare * static_cast<double>(*top))
        return 0.0;
    return share(at_max, s.numel);
}

TensorStep probe_step(int64_t step, const StepSample& s)
{
    TensorStep t;
    t.step = step;
    t.nonfinite = s.nonfinite;
    t.position = s.position;
    const std::optional<double> fp8_max = detail::fp8_max_of(s);
    if (fp8_max && s.numel > 0) {
        t.clip = share(std::max(s.saturated, s.overflows), s.numel);
        t.flush = share(s.underflows, s.numel);
        if (s.scale_inv && detail::positive_finite(s.amax))
            t.headroom_bits = std::log2(*fp8_max * *s.scale_inv / s.amax);
    }
    if (std::isfinite(s.amax) && s.amax > 0)
        t.amax = s.amax;
    return t;
}

TensorStep code_step(int64_t step, const StepSample& s, bool shows_saturation)
{
    TensorStep t;
    t.step = step;
    t.nonfinite = s.nonfinite;
    t.position = s.position;
    if (shows_saturation)
        t.clip = code_clip(s);
    const double amax = s.blocks ? s.blocks->amax : s.amax; // a per-block site's dequantized amax
    if (std::isfinite(amax) && amax > 0)
        t.amax = amax;
    return t;
}

struct SiteInfo {
    const TensorSite* site = nullptr;
    const TensorSiteHealth* health = nullptr;
};

class Judge {
public:
    Judge(const TraceModel& model, const TensorHealth& health, const SiteSamples& samples)
        : model_(model)
        , samples_(samples)
    {
        for (const TensorSite& s : model.tensor_sites)
            info_[s.id].site = &s;
        for (const TensorSiteHealth& h : health.sites)
            info_[h.site_id].health = &h;
    }

    void judge(const Fp8Tensor& tensor, std::vector<NumericsFinding>& out) const
    {
        const std::vector<TensorStep> series = series_of(tensor);
        if (series.empty())
            return;
        NumericsFinding base = describe(tensor, series);
        nonfinite(series, base, out);
        shares(series, base, NumericsRule::Clipping, &TensorStep::clip, kBrokenClipShare, kAtRiskClipShare, out);
        shares(series, base, NumericsRule::Flushing, &TensorStep::flush, kBrokenFlushShare, kAtRiskFlushShare, out);
        // A gradient's amax moves a bit or more in healthy runs, and it follows a forward tensor's drift rather than
        // start one: the two trend rules judge activations and weights.
        if (forward(tensor)) {
            outgrown(series, base, out);
            climb(series, base, out);
        }
    }

private:
    std::vector<TensorStep> series_of(const Fp8Tensor& tensor) const
    {
        std::map<int64_t, TensorStep> by_step;
        if (tensor.probe_site)
            if (const auto found = samples_.find(*tensor.probe_site); found != samples_.end())
                for (const auto& [step, s] : found->second)
                    by_step.emplace(step, probe_step(step, s));
        for (const int64_t code : tensor.code_sites) {
            const auto found = samples_.find(code);
            if (found == samples_.end())
                continue;
            const TensorSiteHealth* h = info_.at(code).health;
            const bool shows_saturation = h != nullptr && h->saturation_samples > 0;
            for (const auto& [step, s] : found->second) {
                const auto [it, fresh] = by_step.try_emplace(step, code_step(step, s, shows_saturation));
                if (!fresh) // the same values: the most any of its sites saw
                    it->second.nonfinite = std::max(it->second.nonfinite, s.nonfinite);
            }
        }
        std::vector<TensorStep> series;
        for (auto& [step, t] : by_step)
            series.push_back(t);
        return series;
    }

    NumericsFinding describe(const Fp8Tensor& tensor, const std::vector<TensorStep>& series) const
    {
        NumericsFinding f;
        f.site_id = tensor.name_site();
        const TensorSite& site = *info_.at(f.site_id).site;
        f.tensor = tensor_site_label(model_, site);
        f.module = detail::module_of(detail::text_of(model_, site.nvtx_path));
        f.role = std::string(tensor_role_word(site.role));
        for (const int64_t code : tensor.code_sites) {
            const TensorSiteHealth* h = info_.at(code).health;
            f.read_by.push_back(
                h != nullptr ? located_site_label(*h) : tensor_site_label(model_, *info_.at(code).site));
        }
        std::vector<double> positions;
        bool lagging = false, any = false;
        for (const TensorStep& t : series) {
            positions.push_back(t.position);
            if (tensor.probe_site && t.headroom_bits) {
                any = true;
                lagging = lagging || std::abs(*t.headroom_bits) > 0.01;
            }
        }
        std::ranges::nth_element(positions, positions.begin() + static_cast<std::ptrdiff_t>(positions.size() / 2));
        f.position = positions[positions.size() / 2];
        f.scale = !any ? ScaleKind::Unknown : lagging ? ScaleKind::Lagging : ScaleKind::Current;
        return f;
    }

    static void nonfinite(
        const std::vector<TensorStep>& series, const NumericsFinding& base, std::vector<NumericsFinding>& out)
    {
        NumericsFinding f = base;
        f.rule = NumericsRule::NonFinite;
        f.severity = NumericsVerdict::Broken;
        for (const TensorStep& t : series) {
            if (t.nonfinite <= 0)
                continue;
            if (f.steps++ == 0)
                f.onset_step = f.worst_step = t.step;
            f.value += static_cast<double>(t.nonfinite);
        }
        if (f.steps > 0)
            out.push_back(std::move(f));
    }

    static void shares(const std::vector<TensorStep>& series, const NumericsFinding& base, NumericsRule rule,
        std::optional<double> TensorStep::*figure, double broken, double at_risk, std::vector<NumericsFinding>& out)
    {
        NumericsFinding f = base;
        f.rule = rule;
        int64_t broken_steps = 0;
        std::optional<int64_t> first_broken, first_at_risk;
        for (const TensorStep& t : series) {
            const std::optional<double> v = t.*figure;
            if (!v || !(*v >= at_risk))
                continue;
            ++f.steps;
            first_at_risk = first_at_risk.value_or(t.step);
            if (*v >= broken) {
                ++broken_steps;
                first_broken = first_broken.value_or(t.step);
            }
            if (*v > f.value) {
                f.value = *v;
                f.worst_step = t.step;
            }
        }
        if (broken_steps > 0) {
            f.severity = NumericsVerdict::Broken;
            f.onset_step = *first_broken;
        } else if (f.steps >= kAtRiskClipSteps) {
            f.severity = NumericsVerdict::AtRisk;
            f.onset_step = *first_at_risk;
        } else {
            return;
        }
        out.push_back(std::move(f));
    }

    static NumericsFinding at_risk(const NumericsFinding& base, NumericsRule rule, int64_t onset, int64_t worst)
    {
        NumericsFinding f = base;
        f.rule = rule;
        f.severity = NumericsVerdict::AtRisk;
        f.onset_step = onset;
        f.worst_step = worst;
        return f;
    }

    static void outgrown(
        const std::vector<TensorStep>& series, const NumericsFinding& base, std::vector<NumericsFinding>& out)
    {
        std::vector<int64_t> steps;
        std::vector<std::optional<double>> headroom, log2_amax;
        for (const TensorStep& t : series) {
            steps.push_back(t.step);
            headroom.push_back(t.headroom_bits);
            log2_amax.push_back(t.amax ? std::optional(std::log2(*t.amax)) : std::nullopt);
        }
        const std::optional<OutgrownScale> o = outgrown_scale(steps, headroom, log2_amax);
        if (!o)
            return;
        NumericsFinding f = at_risk(base, NumericsRule::OutgrownScale, o->onset_step, o->worst_step);
        f.value = -o->mean_shortfall_bits;
        f.steps = o->steps;
        f.short_share = o->short_share;
        f.rise_bits = o->amax_rise_bits;
        out.push_back(std::move(f));
    }

    static void climb(
        const std::vector<TensorStep>& series, const NumericsFinding& base, std::vector<NumericsFinding>& out)
    {
        std::vector<int64_t> steps;
        std::vector<double> log2_amax;
        for (const TensorStep& t : series)
            if (t.amax) {
                steps.push_back(t.step);
                log2_amax.push_back(std::log2(*t.amax));
            }
        if (log2_amax.size() < static_cast<size_t>(kClimbMinSteps))
            return;
        const auto k = static_cast<std::ptrdiff_t>(kBaselineSamples);
        const double baseline = median_of({ log2_amax.begin(), log2_amax.begin() + k });
        const double last = median_of({ log2_amax.end() - k, log2_amax.end() });
        if (last - baseline < kClimbBits)
            return;
        const std::optional<DriftEvidence> evidence = detail::climb_onset("log2_amax", steps, log2_amax, kClimbBits);
        if (!evidence)
            return;
        NumericsFinding f = at_risk(base, NumericsRule::AmaxClimb, evidence->onset_step, steps.back());
        f.value = last - baseline;
        f.steps = evidence->steps_after;
        out.push_back(std::move(f));
    }

    // An activation or a weight: its probe says so, or a forward GEMM reads its codes and it is not E5M2 (the HYBRID
    // recipe's gradients).
    bool forward(const Fp8Tensor& tensor) const
    {
        if (tensor.probe_site) {
            const auto role = static_cast<schema::TensorRole>(info_.at(*tensor.probe_site).site->role);
            return role == schema::TensorRole::Input || role == schema::TensorRole::Weight;
        }
        return std::ranges::any_of(tensor.code_sites, [&](int64_t code) {
            const SiteInfo& i = info_.at(code);
            return static_cast<schema::Dtype>(i.site->dtype) == schema::Dtype::E4M3 && i.health != nullptr
                && i.health->place && i.health->place->phase == GemmPhase::Forward;
        });
    }

    const TraceModel& model_;
    const SiteSamples& samples_;
    std::unordered_map<int64_t, SiteInfo> info_;
};

int severity_rank(NumericsVerdict v)
{
    return v == NumericsVerdict::Broken ? 0 : 1;
}

} // namespace

std::optional<OutgrownScale> outgrown_scale(const std::vector<int64_t>& steps,
    const std::vector<std::optional<double>>& headroom_bits, const std::vector<std::optional<double>>& log2_amax)
{
    const size_t n = steps.size();
    if (headroom_bits.size() != n || log2_amax.size() != n)
        return std::nullopt;
    const auto amaxes = [&](size_t from, size_t to) {
        std::vector<double> v;
        for (size_t i = from; i < to; ++i)
            if (log2_amax[i])
                v.push_back(*log2_amax[i]);
        return v;
    };
    const std::vector<double> end = [&] {
        std::vector<double> all = amaxes(0, n);
        const size_t keep = std::min(all.size(), static_cast<size_t>(kBaselineSamples));
        return std::vector<double>(all.end() - static_cast<std::ptrdiff_t>(keep), all.end());
    }();
    if (end.empty())
        return std::nullopt;
    const double last = median_of(end);
    // Of the onsets that pass, the one nearest the knee of the amax's climb (compare's knee_of: flat before it, rising
    // linearly from it), the earlier of two as near: the earliest that passes would take in the steps before the
    // climb, whose tail holds enough short steps to pass.
    std::vector<size_t> shown_at;
    std::vector<double> climbing;
    for (size_t i = 0; i < n; ++i)
        if (log2_amax[i]) {
            shown_at.push_back(i);
            climbing.push_back(*log2_amax[i]);
        }
    const size_t knee = climbing.size() > static_cast<size_t>(kDriftMinStepsBefore)
        ? shown_at[detail::knee_of(climbing, climbing.size() - 1)]
        : 0;
    std::optional<OutgrownScale> best;
    size_t best_distance = SIZE_MAX;
    for (size_t k = 1; k + static_cast<size_t>(kOutgrownSteps) <= n; ++k) {
        OutgrownScale o { .onset_step = steps[k] };
        int64_t shown = 0, short_steps = 0;
        double shortfall = 0;
        for (size_t i = k; i < n; ++i) {
            if (!headroom_bits[i])
                continue;
            ++shown;
            if (*headroom_bits[i] >= kStaleScaleHeadroomBits)
                continue;
            ++short_steps;
            shortfall -= *headroom_bits[i];
            if (*headroom_bits[i] < o.worst_bits) {
                o.worst_bits = *headroom_bits[i];
                o.worst_step = steps[i];
            }
        }
        if (shown < kOutgrownSteps || short_steps == 0)
            continue;
        std::vector<double> before = amaxes(k >= static_cast<size_t>(kBaselineSamples) ? k - kBaselineSamples : 0, k);
        if (before.empty())
            continue;
        o.steps = shown;
        o.short_share = static_cast<double>(short_steps) / static_cast<double>(shown);
        o.mean_shortfall_bits = shortfall / static_cast<double>(short_steps);
        o.amax_rise_bits = last - median_of(std::move(before));
        if (o.short_share < kOutgrownShortShare || o.mean_shortfall_bits < kOutgrownBits
            || o.amax_rise_bits < kOutgrownRiseBits)
            continue;
        const size_t distance = k > knee ? k - knee : knee - k;
        if (distance < best_distance) {
            best_distance = distance;
            best = o;
        }
    }
    return best;
}

const char* numerics_verdict_name(NumericsVerdict verdict)
{
    switch (verdict) {
    case NumericsVerdict::NoData:
        return "no_data";
    case NumericsVerdict::Healthy:
        return "healthy";
    case NumericsVerdict::AtRisk:
        return "at_risk";
    case NumericsVerdict::Broken:
        return "broken";
    }
    return "no_data";
}

const char* numerics_rule_name(NumericsRule rule)
{
    switch (rule) {
    case NumericsRule::NonFinite:
        return "nonfinite";
    case NumericsRule::Clipping:
        return "clipping";
    case NumericsRule::Flushing:
        return "flushing";
    case NumericsRule::OutgrownScale:
        return "outgrown_scale";
    case NumericsRule::AmaxClimb:
        return "amax_climb";
    }
    return "clipping";
}

NumericsJudgement judge_numerics(
    const TraceModel& model, const StepSet& steps, const TensorHealth& health, std::optional<uint32_t> device)
{
    NumericsJudgement j;
    const SiteSamples samples = detail::collect_site_samples(model, steps, device);
    const std::vector<Fp8Tensor> tensors = detail::group_fp8_tensors(model, samples);
    j.tensors = static_cast<int64_t>(tensors.size());
    std::set<int64_t> sampled;
    for (const Fp8Tensor& t : tensors) {
        j.sites += static_cast<int64_t>(t.code_sites.size()) + (t.probe_site ? 1 : 0);
        for (const int64_t site : t.code_sites)
            for (const auto& [step, s] : samples.at(site))
                sampled.insert(step);
        if (t.probe_site)
            for (const auto& [step, s] : samples.at(*t.probe_site))
                sampled.insert(step);
    }
    j.sampled_steps = static_cast<int64_t>(sampled.size());
    if (tensors.empty()) {
        j.no_data = model.tensor_stats.empty() ? "no tensor statistics in the trace"
                                               : "no FP8 tensor statistics in the analysed steps";
        return j;
    }
    const Judge judge(model, health, samples);
    for (const Fp8Tensor& t : tensors)
        judge.judge(t, j.findings);
    std::ranges::sort(j.findings, [](const NumericsFinding& a, const NumericsFinding& b) {
        return std::tuple(severity_rank(a.severity), a.onset_step, a.position, a.site_id, static_cast<int>(a.rule))
            < std::tuple(severity_rank(b.severity), b.onset_step, b.position, b.site_id, static_cast<int>(b.rule));
    });
    j.verdict = j.findings.empty()                               ? NumericsVerdict::Healthy
        : j.findings.front().severity == NumericsVerdict::Broken ? NumericsVerdict::Broken
                                                                 : NumericsVerdict::AtRisk;
    return j;
}

} // namespace fp8scope::analyzer
