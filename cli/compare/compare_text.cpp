// `fp8scope compare` as text for a terminal or a log: what the pair is (GPU, job, model, precision), the verdict,
// then the traces and their common steps,
// what recording added when notable, the drifting sites with their evidence, the scaling events, the performance
// side by side (per step, the kernel diff, FP8's price), the scaling recipes, the site matching and the thresholds.
// Without a tensor comparison, the verdict says why and the performance follows alone. Strings from the traces are
// shown with printable().
#include "compare/compare_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/text_paint.hpp"
#include "report/report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

void trace_lines(
    std::string& out, std::string_view name, const TraceModel& model, const Report& report, const Paint& paint)
{
    out += fmt::format("{:<11}{}\n", name, trace_sentence(model, report, printable));
    if (!model.meta.command_line.empty())
        out += fmt::format("{:<11}{}\n", "", printable(shortened(model.meta.command_line, 200)));
    for (const std::string& warning : recording_warnings(report.recording))
        out += fmt::format("{:<11}{}\n", "", paint.warning("warning: " + warning));
}

void flagged_text(std::string& out, const CompareResult& r, const Paint& paint)
{
    if (r.flagged.empty())
        return;
    heading_line(out, paint, fmt::format("Drifting sites ({}, earliest onset first)", r.flagged.size()));
    for (size_t k = 0; k < r.flagged.size() && k < kListedCompareSites; ++k) {
        const CompareSite& s = r.sites.at(r.flagged[k]);
        out += fmt::format("  {:>2}. {}\n      {}; recipe {}; {} amax-ratio events, {} stale-scale steps\n", k + 1,
            printable(s.label), onset_text(s.onset_step), printable(recipe_text(s)), s.amax_ratio_events,
            s.stale_scale_events);
        for (const DriftEvidence& e : s.drift)
            out += fmt::format("      {}\n", evidence_text(e));
    }
    if (r.flagged.size() > kListedCompareSites)
        out += fmt::format("  … and {} more (--format json lists them all)\n", r.flagged.size() - kListedCompareSites);
}

void performance_text(std::string& out, const CompareResult& r, const Paint& paint)
{
    const PerformanceComparison& p = r.performance;
    const std::string steps = performance_steps_text(p);
    heading_line(out, paint, fmt::format("Performance (per step, means over {})", steps));
    out += fmt::format("  {:<30} {:>12} {:>12}  {}\n", "", "run", "reference", "difference");
    for (const PerformanceRow& row : performance_rows(p, r.identity.performance_only.empty()))
        out += fmt::format("  {:<30} {:>12} {:>12}  {}\n", row.what, row.run, row.ref, row.change);
    heading_line(
        out, paint, fmt::format("Per step over {}: medians, then idle by cause and kernel time by class", steps));
    out += fmt::format("  {:<30} {:>12} {:>12}  {}\n", "", "run", "reference", "change");
    for (const PerformanceRow& row : per_step_rows(p))
        out += fmt::format("  {:<30} {:>12} {:>12}  {}\n", row.what, row.run, row.ref, row.change);
    for (const KernelList& list : kernel_lists(p)) {
        heading_line(out, paint, list.title);
        if (list.rows.empty())
            continue;
        out += fmt::format("  {:>11} {:>11} {:>18}  {:>9} {:>9}  {:<13} {}\n", "run", "reference", "change",
            "count run", "count ref", "class", "name");
        for (size_t i = 0; i < list.rows.size() && i < kListedKernelChangesText; ++i) {
            const KernelListRow& k = list.rows[i];
            out += fmt::format("  {:>11} {:>11} {:>18}  {:>9} {:>9}  {:<13} {}\n", k.run, k.ref, k.change, k.run_count,
                k.ref_count, k.cls, display_kernel_name(k.name));
        }
        if (list.names > kListedKernelChangesText)
            out += fmt::format("  … and {} more (--format json lists {})\n", list.names - kListedKernelChangesText,
                std::min(list.names, kKernelChangesListed));
    }
    if (const std::string not_split = price_not_split_sentence(r.identity, printable); !not_split.empty()) {
        heading_line(out, paint, "FP8's price");
        out += fmt::format("  {}\n", not_split);
        return;
    }
    heading_line(out, paint, "FP8's price (per step: the traced step change in four parts)");
    for (const PriceRow& row : fp8_price_rows(p))
        out += fmt::format("  {:<30} {:>12} {:>5}  {}\n", row.what, row.per_step, row.share, row.note);
    out += fmt::format("  {}\n  {}\n", fp8_price_sentence(p), recording_cost_sentence(p));
    out += "  What would win it back, per step:\n";
    for (const RecoveryRow& row : fp8_recovery_rows(p))
        out += fmt::format("    {:<15} {:<18} {}\n", row.fix, row.recovers, row.how);
}

void unmatched_text(std::string& out, std::string_view side, const std::vector<UnmatchedSite>& sites)
{
    if (sites.empty())
        return;
    out += fmt::format("  unmatched in {} ({}):\n", side, sites.size());
    const std::vector<UnmatchedGroup> groups = unmatched_groups(sites);
    for (size_t i = 0; i < groups.size() && i < kListedCompareSites; ++i)
        out += fmt::format("    {}\n", unmatched_group_text(groups[i], printable, printable));
    if (groups.size() > kListedCompareSites)
        out += fmt::format(
            "    … and {} more reasons (--format json lists every site)\n", groups.size() - kListedCompareSites);
}

} // namespace

std::string render_compare_text(const CompareInput& input, const CompareResult& r, ReportTextStyle style)
{
    const Paint paint(style.color);
    std::string out = paint.heading(fmt::format("fp8scope compare: {} against {}", printable(input.run_model.path),
                          printable(input.ref_model.path)))
        + "\n";
    for (const PairLine& line : pair_lines(r.identity, printable))
        out += fmt::format("{:<11}{}\n", line.label + ":", line.text);
    const std::string verdict = verdict_sentence(r, printable);
    out += (default_compare_verdict(r).healthy() ? paint.good(verdict) : paint.warning(verdict)) + "\n";
    if (!r.flagged.empty())
        out += fmt::format("Drift: {}\n", drift_sentence(r, printable));
    if (r.numerics_compared())
        out += fmt::format("Loss: {}\n", loss_sentence(r.loss, printable));
    trace_lines(out, "Run:", input.run_model, input.run_report, paint);
    trace_lines(out, "Reference:", input.ref_model, input.ref_report, paint);
    out += fmt::format("Steps: {}\n", alignment_sentence(r.alignment));
    if (const std::string recording = recording_inflation_sentence(r.performance); !recording.empty())
        out += paint.warning(recording) + "\n";

    if (r.numerics_compared()) {
        flagged_text(out, r, paint);
        heading_line(out, paint, "Scaling events against the reference (all matched sites, common steps)");
        out += fmt::format("  {:<24} {}\n", amax_ratio_event_title(),
            compare_events_text(r.amax_ratio_events, r.first_amax_ratio_events, printable));
        out += fmt::format("  stale scale              {}\n",
            compare_events_text(r.stale_scale_events, r.first_stale_scale_events, printable));
        out += "  (stale: the reference's amax is beyond the run's scale; values in bits)\n";
    }

    performance_text(out, r, paint);
    if (!r.numerics_compared())
        return out;
    heading_line(out, paint, "Scaling recipe of the run's FP8 sites");
    out += fmt::format("  {}\n", recipe_sentence(r));

    heading_line(out, paint, fmt::format("Sites: {}", matching_sentence(r)));
    out += fmt::format("  {}\n", role_normalisation_sentence(r));
    unmatched_text(out, "the run", r.run_unmatched);
    unmatched_text(out, "the reference", r.ref_unmatched);

    out += fmt::format("\nThresholds: {}\n", compare_thresholds_sentence());
    out += "The loss thresholds follow:\n";
    for (const std::string_view source : kLossThresholdSources)
        out += fmt::format("  - {}\n", source);
    return out;
}

} // namespace fp8scope::cli
