// `fp8scope compare --format md`: GitHub-flavoured Markdown for CI job summaries. Labels and paths from the traces
// are escaped (markdown_escaped, or code spans in table cells), so that markup and "|" stay text.
#include "compare/compare_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"
#include "report/report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

std::string cell_code(std::string_view text)
{
    return markdown_code(text, MarkdownPlace::TableCell);
}

std::string traces_table(const CompareInput& input)
{
    std::string out = "| | run | reference |\n|---|---|---|\n";
    out += fmt::format("| trace | {} | {} |\n", cell_code(input.run_model.path), cell_code(input.ref_model.path));
    out += fmt::format("| producer | {} | {} |\n", markdown_escaped(input.run_model.meta.producer),
        markdown_escaped(input.ref_model.meta.producer));
    out += fmt::format("| command line | {} | {} |\n", cell_code(shortened(input.run_model.meta.command_line, 200)),
        cell_code(shortened(input.ref_model.meta.command_line, 200)));
    out += fmt::format("| steps | {} | {} |\n", markdown_escaped(steps_sentence(input.run_report.steps)),
        markdown_escaped(steps_sentence(input.ref_report.steps)));
    return out;
}

std::string flagged_table(const CompareResult& r)
{
    if (r.flagged.empty())
        return "";
    std::string out = fmt::format("\n### Drifting sites ({}, earliest onset first)\n\n| # | site | onset | recipe | "
                                  "amax-ratio events | evidence |\n|---|---|---|---|---|---|\n",
        r.flagged.size());
    for (size_t k = 0; k < r.flagged.size() && k < kListedCompareSites; ++k) {
        const CompareSite& s = r.sites.at(r.flagged[k]);
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", k + 1, cell_code(s.label), onset_text(s.onset_step),
            scaling_recipe_name(s.recipe), s.amax_ratio_events, markdown_escaped(site_evidence_text(s)));
    }
    if (r.flagged.size() > kListedCompareSites)
        out += fmt::format("\n{} more in the JSON output.\n", r.flagged.size() - kListedCompareSites);
    return out;
}

std::string unmatched_list(std::string_view side, const std::vector<UnmatchedSite>& sites)
{
    if (sites.empty())
        return "";
    std::string out = fmt::format("\nUnmatched in {} ({}):\n\n", side, sites.size());
    const std::vector<UnmatchedGroup> groups = unmatched_groups(sites);
    for (size_t i = 0; i < groups.size() && i < kListedCompareSites; ++i)
        out += "- "
            + unmatched_group_text(
                groups[i], [](std::string_view label) { return markdown_code(label, MarkdownPlace::Text); },
                [](std::string_view text) { return markdown_escaped(text); })
            + "\n";
    if (groups.size() > kListedCompareSites)
        out += fmt::format(
            "- … and {} more reasons (the JSON output lists every site)\n", groups.size() - kListedCompareSites);
    return out;
}

std::string performance_markdown(const PerformanceComparison& p, const PairIdentity& identity)
{
    const std::string steps = performance_steps_text(p);
    std::string out = fmt::format("\n### Performance (per step, means over {})\n\n| | run | reference | difference "
                                  "|\n|---|---|---|---|\n",
        steps);
    for (const PerformanceRow& row : performance_rows(p, identity.performance_only.empty()))
        out += fmt::format("| {} | {} | {} | {} |\n", row.what, row.run, row.ref, row.change);
    out += fmt::format("\n### Per step over {}: medians, then idle by cause and kernel time by class\n\n| | run | "
                       "reference | change |\n|---|---|---|---|\n",
        steps);
    for (const PerformanceRow& row : per_step_rows(p))
        out += fmt::format("| {} | {} | {} | {} |\n", row.what, row.run, row.ref, row.change);
    for (const KernelList& list : kernel_lists(p)) {
        out += fmt::format("\n#### {}\n", list.title);
        if (list.rows.empty())
            continue;
        out += "\n| run | reference | change | per step, run | per step, reference | class | kernel |\n"
               "|---|---|---|---|---|---|---|\n";
        for (size_t i = 0; i < list.rows.size() && i < kListedKernelChangesText; ++i) {
            const KernelListRow& k = list.rows[i];
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", k.run, k.ref, k.change, k.run_count,
                k.ref_count, k.cls, cell_code(display_kernel_name(k.name)));
        }
        if (list.names > kListedKernelChangesText)
            out += fmt::format("\n{} more; the JSON output lists {}.\n", list.names - kListedKernelChangesText,
                std::min(list.names, kKernelChangesListed));
    }
    if (const std::string not_split = price_not_split_sentence(identity, markdown_escaped); !not_split.empty())
        return out + fmt::format("\n### FP8's price\n\n{}.\n", not_split);
    out += "\n### FP8's price (per step: the traced step change in four parts)\n\n| part | per step | share of the "
           "change | |\n|---|---|---|---|\n";
    for (const PriceRow& row : fp8_price_rows(p))
        out += fmt::format("| {} | {} | {} | {} |\n", row.what, row.per_step, row.share, markdown_escaped(row.note));
    out += fmt::format("\n{}; {}.\n\nWhat would win it back, per step:\n\n", markdown_escaped(fp8_price_sentence(p)),
        markdown_escaped(recording_cost_sentence(p)));
    for (const RecoveryRow& row : fp8_recovery_rows(p))
        out += fmt::format("- {}: {} ({})\n", row.fix, row.recovers, markdown_escaped(row.how));
    return out;
}

} // namespace

std::string render_compare_markdown(const CompareInput& input, const CompareResult& r)
{
    std::string out = fmt::format("## fp8scope compare: {} against {}\n\n",
        markdown_code(input.run_model.path, MarkdownPlace::Text),
        markdown_code(input.ref_model.path, MarkdownPlace::Text));
    for (const PairLine& line : pair_lines(r.identity, markdown_escaped))
        out += fmt::format("- **{}:** {}\n", line.label, line.text);
    out += fmt::format("\n**{}**\n\n", verdict_sentence(r, markdown_escaped));
    if (r.numerics_compared())
        out += fmt::format("Loss: {}.\n\n", loss_sentence(r.loss, markdown_escaped));
    out += traces_table(input);
    out += fmt::format("\nSteps: {}.\n", alignment_sentence(r.alignment));
    for (const auto* report : { &input.run_report, &input.ref_report })
        for (const std::string& warning : recording_warnings(report->recording))
            out += fmt::format("\n**Warning** ({}): {}.\n", report == &input.run_report ? "run" : "reference",
                markdown_escaped(warning));
    if (const std::string recording = recording_inflation_sentence(r.performance); !recording.empty())
        out += fmt::format("\n**{}.**\n", markdown_escaped(recording));
    if (r.numerics_compared()) {
        out += flagged_table(r);
        out += fmt::format("\n### Scaling events against the reference\n\n- {}: {}\n- stale scale (the reference's "
                           "amax beyond the run's scale): {}\n",
            amax_ratio_event_title(),
            compare_events_text(r.amax_ratio_events, r.first_amax_ratio_events, markdown_escaped),
            compare_events_text(r.stale_scale_events, r.first_stale_scale_events, markdown_escaped));
    }
    out += performance_markdown(r.performance, r.identity);
    if (!r.numerics_compared())
        return out;
    out += fmt::format("\nScaling recipe of the run's FP8 sites: {}.\n", recipe_sentence(r));
    out += fmt::format("\n### Sites\n\n{}; {}.\n", matching_sentence(r), role_normalisation_sentence(r));
    out += unmatched_list("the run", r.run_unmatched);
    out += unmatched_list("the reference", r.ref_unmatched);
    out += fmt::format(
        "\nThresholds: {}. The loss thresholds follow:\n\n", markdown_escaped(compare_thresholds_sentence()));
    for (const std::string_view source : kLossThresholdSources)
        out += fmt::format("- {}\n", markdown_escaped(source));
    return out;
}

} // namespace fp8scope::cli
