#include "report/report_summary.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/numerics_wording.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

SummaryLine worst_tensor_finding(const TensorHealth& h, Escape escape)
{
    SummaryLine line { .label = "tensors", .text = {}, .warning = false };
    if (h.totals.samples == 0) {
        line.text = "no tensor statistics in the trace (zero-code statistics come from cuBLASLt GEMMs only; "
                    "fp8scope.torch probes add others)";
        return line;
    }
    if (h.first_nonfinite) {
        line.text = "NaN/Inf: " + first_nonfinite_text(h, escape);
        line.warning = true;
        return line;
    }
    if (h.flt_max_scale.total > 0) {
        line.text = "scale = FLT_MAX: " + tensor_event_text(h, TensorEventKind::FltMaxScale, escape);
        line.warning = true;
        return line;
    }
    const auto top_site = [&](const std::vector<size_t>& ranking) -> const TensorSiteHealth* {
        return ranking.empty() ? nullptr : &h.sites[ranking.front()];
    };
    if (const TensorSiteHealth* s = top_site(h.top_saturation); s && s->worst_saturation_ratio > 0) {
        const auto saturated = std::ranges::count_if(
            h.sites, [](const TensorSiteHealth& site) { return site.worst_saturation_ratio > 0; });
        line.text = fmt::format("most saturation {} of the values at {} in {} ({} site{} saturated)",
            fraction_text(s->worst_saturation_ratio), step_text(s->worst_saturation_step),
            escape(located_site_label(*s)), saturated, saturated == 1 ? "" : "s");
        line.warning = true;
        return line;
    }
    if (h.stale_scale.total > 0) {
        line.text = "stale scale: " + tensor_event_text(h, TensorEventKind::StaleScale, escape);
        return line;
    }
    if (const TensorSiteHealth* s = top_site(h.top_underflow); s && s->worst_underflow_ratio > 0) {
        line.text = fmt::format("most underflow {} of the values at {} in {}", fraction_text(s->worst_underflow_ratio),
            step_text(s->worst_underflow_step), escape(located_site_label(*s)));
        return line;
    }
    if (h.zero_amax.total > 0) {
        line.text = "amax = 0: " + tensor_event_text(h, TensorEventKind::ZeroAmax, escape);
        return line;
    }
    line.text = fmt::format("no NaN/Inf, saturation, stale scale or underflow in {} samples", h.totals.samples);
    return line;
}

std::vector<SummaryLine> report_summary(const TraceModel& model, const Report& r, Escape escape)
{
    std::vector<SummaryLine> lines;
    // Numerics before speed: a broken verdict's fix is the first thing to do (docs/analysis.md "Numerics verdict").
    const NumericsJudgement& numerics = r.numerics;
    const bool broken = numerics.verdict == NumericsVerdict::Broken;
    if (broken)
        lines.push_back({ "first fix", present::finding_with_fix(*numerics.lead(), escape), true });
    const BubbleTotals& t = r.totals;
    const size_t steps = r.steps.steps.size();
    lines.push_back({ "step",
        fmt::format("{} per step over {} step{} ({}); GPU busy {:.1f}%, bubble ratio {:.3f}",
            format_duration_ns(per_step(t.step_ns, steps)), steps, steps == 1 ? "" : "s",
            step_source_name(r.steps.source), percent(t.busy_ns, t.step_ns), t.bubble_ratio),
        false });
    if (t.idle_ns > 0) {
        const BubbleCause cause = top_cause(t);
        lines.push_back({ "top cause",
            fmt::format("{}, {:.1f}% of step time idle", bubble_cause_name(cause),
                percent(t.cause_ns[static_cast<size_t>(cause)], t.step_ns)),
            false });
    }
    const WhatIf w = estimate_what_if(r);
    const char* speed_label = broken ? "speed fix" : "first fix";
    if (w.recommendations.empty())
        lines.push_back({ speed_label, no_recommendation_sentence(false), false });
    else
        lines.push_back({ speed_label,
            fmt::format("{}: saves up to {} per step ({:.1f}%)", w.recommendations.front().title,
                format_duration_ns(w.recommendations.front().saving_per_step_ns),
                100.0 * w.recommendations.front().saving_share),
            false });
    const KernelClassReport& k = r.kernel_classes;
    const ClassTotals& gemm = k.of(KernelClass::Fp8Gemm);
    const int64_t bookkeeping_ns = k.of(KernelClass::Cast).time_ns + k.of(KernelClass::AmaxScale).time_ns;
    const int64_t bookkeeping_count = k.of(KernelClass::Cast).count + k.of(KernelClass::AmaxScale).count;
    const ClassTotals& fused = k.of(KernelClass::FusedBookkeeping);
    if (gemm.count > 0 || bookkeeping_count > 0 || fused.count > 0) {
        std::string text
            = fmt::format("FP8 GEMMs {:.1f}% of kernel time; casts and amax/scale {:.1f}% ({} per step, {} kernels)",
                100.0 * k.share_of_kernel_time(KernelClass::Fp8Gemm),
                100.0 * (k.share_of_kernel_time(KernelClass::Cast) + k.share_of_kernel_time(KernelClass::AmaxScale)),
                format_duration_ns(per_step(bookkeeping_ns, steps)), per_step(bookkeeping_count, steps));
        if (fused.count > 0) // torch.compile: the bookkeeping is in Inductor's fused kernels
            text += fmt::format("; fused bookkeeping {:.1f}% ({} per step in {} kernels, {} of it in kernels that do "
                                "only bookkeeping)",
                100.0 * k.share_of_kernel_time(KernelClass::FusedBookkeeping),
                format_duration_ns(per_step(fused.time_ns, steps)), per_step(fused.count, steps),
                format_duration_ns(per_step(k.fused_only_bookkeeping.time_ns, steps)));
        lines.push_back({ "FP8", text, false });
    } else {
        // XLA's Triton GEMMs name no dtype (docs/cli.md "What every format shows"): an FP8 one among them cannot be
        // told apart.
        const bool xla_gemms = std::ranges::any_of(r.top_kernels.rows, [&](const KernelTableRow& row) {
            return row.cls == KernelClass::OtherGemm && model.strings[row.name].starts_with("gemm_fusion_dot");
        });
        lines.push_back({ "FP8",
            xla_gemms
                ? "no FP8 GEMM found: XLA's Triton GEMMs (gemm_fusion_dot_*) carry no dtype in their names, so FP8 "
                  "ones cannot be told apart"
                : "no FP8 GEMM, cast or amax/scale kernel in the steps",
            false });
    }
    if (numerics.verdict != NumericsVerdict::NoData)
        lines.push_back(
            { "numerics", present::numerics_summary(numerics, escape), numerics.verdict != NumericsVerdict::Healthy });
    lines.push_back(worst_tensor_finding(r.tensor_health, escape));
    if (!r.nan_scalars.empty())
        lines.push_back({ "NaN", escape(nan_scalars_sentence(r.nan_scalars)), true });
    // Only what is wrong with the recording: a complete one is said below the summary.
    if (!recording_warnings(r.recording).empty())
        lines.push_back({ "recording", recording_sentence(r.recording), true });
    return lines;
}

} // namespace fp8scope::cli
