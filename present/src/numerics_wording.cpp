#include "fp8scope/present/numerics_wording.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace fp8scope::present {

using namespace analyzer;

namespace {

// "99.3%", "0.12%", "0.0031%": three significant digits.
std::string percent_text(double share)
{
    return fmt::format("{:.3g}%", 100.0 * share);
}

std::string bits_text(double bits)
{
    return fmt::format("{:.2g} bit{}", std::abs(bits), std::abs(bits) == 1.0 ? "" : "s");
}

} // namespace

std::string numerics_verdict_word(NumericsVerdict verdict)
{
    switch (verdict) {
    case NumericsVerdict::Broken:
        return "broken";
    case NumericsVerdict::AtRisk:
        return "at risk";
    case NumericsVerdict::Healthy:
        return "healthy";
    case NumericsVerdict::NoData:
        break;
    }
    return "no FP8 statistics";
}

std::string finding_tensor(const NumericsFinding& f, Escape escape)
{
    if (f.module.empty())
        return escape(f.read_by.empty() ? f.tensor : f.read_by.front());
    const std::string module = escape(f.module);
    if (f.role == "input" || f.role == "weight")
        return fmt::format("{}'s {}", module, f.role);
    if (f.role == "gradient")
        return fmt::format("{}'s output gradient", module);
    if (f.role.empty())
        return module;
    return fmt::format("{} · {}", module, escape(f.role));
}

std::string finding_sentence(const NumericsFinding& f, Escape escape)
{
    const std::string tensor = finding_tensor(f, escape);
    const std::string from = f.onset_step == f.worst_step ? "" : fmt::format(" (from step {})", f.onset_step);
    switch (f.rule) {
    case NumericsRule::NonFinite:
        return fmt::format("{} holds NaN/Inf from step {} ({:.0f} values in {} sampled step{})", tensor, f.onset_step,
            f.value, f.steps, f.steps == 1 ? "" : "s");
    case NumericsRule::Clipping:
        return fmt::format("{}: {} of its values clip at step {}{}", tensor, percent_text(f.value), f.worst_step, from);
    case NumericsRule::Flushing:
        return fmt::format(
            "{}: {} of its values flush to zero at step {}{}", tensor, percent_text(f.value), f.worst_step, from);
    case NumericsRule::OutgrownScale:
        return fmt::format("{} outgrows its scale from step {}: beyond it in {:.0f}% of {} steps (by {} on average) as "
                           "its amax grows {}",
            tensor, f.onset_step, 100.0 * f.short_share, f.steps, bits_text(f.value), bits_text(f.rise_bits));
    case NumericsRule::AmaxClimb:
        return fmt::format("{}'s amax climbs {} from step {}", tensor, bits_text(f.value), f.onset_step);
    }
    return tensor;
}

std::string finding_fix(const NumericsFinding& f)
{
    switch (f.rule) {
    case NumericsRule::NonFinite:
        return "find where the first NaN/Inf came from (Tensor health, first NaN/Inf) before trusting this run";
    case NumericsRule::Clipping:
    case NumericsRule::OutgrownScale:
        if (f.scale == ScaleKind::Current)
            return "its scale follows its own amax, so check how the scale is computed";
        return "use current scaling for it, or a shorter amax history";
    case NumericsRule::Flushing:
        return "its scale is set by values far above the bulk: per-block scaling (MXFP8, 1×128 blocks) keeps the rest "
               "in range";
    case NumericsRule::AmaxClimb:
        return "find the feature that grows; per-block scaling or clamping it keeps the rest of the tensor in range";
    }
    return {};
}

std::string finding_with_fix(const NumericsFinding& f, Escape escape)
{
    return fmt::format("{} — {}", finding_sentence(f, escape), finding_fix(f));
}

std::string read_by_text(const NumericsFinding& f, Escape escape)
{
    if (f.read_by.empty())
        return {};
    std::string out = "read by ";
    for (size_t i = 0; i < f.read_by.size(); ++i)
        out += (i == 0 ? "" : ", ") + escape(f.read_by[i]);
    return out;
}

std::string numerics_summary(const NumericsJudgement& j, Escape escape)
{
    if (j.verdict == NumericsVerdict::NoData)
        return fmt::format("no verdict: {}", j.no_data);
    if (j.verdict == NumericsVerdict::Healthy)
        return fmt::format("healthy: {} FP8 tensor{} over {} sampled step{}: none clips, flushes, outgrows its scale, "
                           "climbs or holds NaN/Inf",
            j.tensors, j.tensors == 1 ? "" : "s", j.sampled_steps, j.sampled_steps == 1 ? "" : "s");
    std::set<int64_t> broken, at_risk;
    for (const NumericsFinding& f : j.findings)
        (f.severity == NumericsVerdict::Broken ? broken : at_risk).insert(f.site_id);
    std::erase_if(at_risk, [&](int64_t site) { return broken.contains(site); });
    std::string counts = fmt::format("{} of {} FP8 tensors", broken.size() + at_risk.size(), j.tensors);
    if (!broken.empty())
        counts += fmt::format(": {} broken, {} at risk", broken.size(), at_risk.size());
    return fmt::format(
        "{}: {} ({})", numerics_verdict_word(j.verdict), finding_sentence(j.findings.front(), escape), counts);
}

std::string numerics_thresholds_sentence()
{
    return fmt::format("broken: NaN/Inf, or {} of a tensor's values clipped or {} flushed in a step; at risk: {} "
                       "clipped or {} flushed in {} sampled steps, the amax beyond the scale in {:.0f}% of at least "
                       "{} sampled steps, by {} on average, as it grows {}, or a forward tensor's amax climbing {} "
                       "(codes clip only when {}% of their top octave is "
                       "at max)",
        percent_text(kBrokenClipShare), percent_text(kBrokenFlushShare), percent_text(kAtRiskClipShare),
        percent_text(kAtRiskFlushShare), kAtRiskClipSteps, 100.0 * kOutgrownShortShare, kOutgrownSteps,
        bits_text(kOutgrownBits), bits_text(kOutgrownRiseBits), bits_text(kClimbBits),
        static_cast<int>(100 * kPileUpShare));
}

} // namespace fp8scope::present
