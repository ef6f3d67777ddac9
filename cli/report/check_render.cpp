#include "report/check_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using analyzer::BudgetResult;

namespace {

std::string figure(const BudgetResult& r, double value)
{
    if (r.name == "no-nonfinite" || r.name == "max-drift-sites")
        return fmt::format("{:.0f}", value); // samples, or NaN/Inf elements of the first; sites
    if (r.name == "max-straggler-wait" || r.name == "max-step-time")
        return format_duration_ns(static_cast<int64_t>(value)); // ns
    if (r.name == "max-loss-delta")
        return delta_percent(value); // as compare writes the loss delta: 0.0025 is "0.25%" (DeepSeek-V3's)
    // Tensor fractions that matter are small (1e-4 of a tensor clipped): significant digits, not decimals.
    if (r.name == "max-saturation" || r.name == "max-underflow")
        return fmt::format("{:.3g}", value);
    return r.name == "max-syncs-per-step" ? fmt::format("{:.2f}", value) : fmt::format("{:.3f}", value);
}

// The figure, or "-" for a budget with no data to judge (worst_text() gives the reason).
std::string shown_value(const BudgetResult& r)
{
    return r.unavailable.empty() ? figure(r, r.value) : "-";
}

std::string worst_text(const BudgetResult& r)
{
    if (!r.unavailable.empty())
        return r.unavailable;
    // Tensor budgets name a site (untrusted text from the trace); no-nonfinite names the first sample.
    const std::string step = r.worst_step ? fmt::format("step {}", *r.worst_step) : "no step";
    // Against --ref, `where` is the analyzer's sentence: the first divergent site and its onset step, or what
    // the loss delta averages (its worst step is then the largest single-step delta).
    if (r.name == "max-drift-sites")
        return r.where.empty() ? "no site drifts" : printable(r.where);
    if (r.name == "max-loss-delta")
        return r.worst_step
            ? fmt::format("{}; worst step {}: {}", printable(r.where), *r.worst_step, figure(r, r.worst_value))
            : printable(r.where);
    if (r.name == "no-nonfinite")
        return r.where.empty()
            ? "no NaN/Inf in any tensor sample"
            : fmt::format("first at {}: {} NaN/Inf in {}", step, figure(r, r.worst_value), printable(r.where));
    if (!r.where.empty())
        return fmt::format("worst {}: {} in {}", step, figure(r, r.worst_value), printable(r.where));
    // The straggler wait names both ranks: the one that waited (the figure's) and the straggler it waited for.
    if (r.name == "max-straggler-wait" && r.rank && r.worst_step)
        return fmt::format("rank {} waited {} in step {}{}", *r.rank, figure(r, r.worst_value), *r.worst_step,
            r.straggler_rank ? fmt::format(" for the straggler, rank {}", *r.straggler_rank) : std::string());
    // Over the ranks of one job, the figure is one rank's: it is named first.
    const std::string rank = r.rank ? fmt::format("rank {}, ", *r.rank) : std::string();
    if (!r.worst_step)
        return rank + "no step has a figure";
    return fmt::format("{}worst step {}: {}", rank, *r.worst_step, figure(r, r.worst_value));
}

// The message of a failed budget: which figure, over which limit, and where it is worst.
std::string failure_text(const BudgetResult& r)
{
    if (!r.unavailable.empty())
        return fmt::format("{}: {}", r.name, r.unavailable);
    return fmt::format("{} = {} exceeds the budget {}; {}", r.name.starts_with("max-") ? r.name.substr(4) : r.name,
        figure(r, r.value), figure(r, r.limit), worst_text(r));
}

size_t failures(const std::vector<BudgetResult>& results)
{
    return static_cast<size_t>(std::ranges::count_if(results, [](const BudgetResult& r) { return !r.passed; }));
}

} // namespace

std::vector<std::string> rank_recording_warnings(const std::vector<analyzer::RankSummary>& ranks)
{
    std::vector<std::string> warnings;
    for (const analyzer::RankSummary& rank : ranks)
        for (const std::string& warning : recording_warnings(rank.recording))
            warnings.push_back(fmt::format("rank {} ('{}'): {}", rank.rank, rank.path, warning));
    return warnings;
}

std::string render_check_text(const CheckSubject& subject, const std::vector<BudgetResult>& results)
{
    std::string out = fmt::format("fp8scope check: {}{}\n", printable(subject.trace),
        subject.reference.empty() ? std::string() : " against " + printable(subject.reference));
    for (const std::string& warning : recording_warnings(subject.recording))
        out += fmt::format("  warning: {}\n", warning);
    for (const std::string& warning : subject.warnings)
        out += fmt::format("  warning: {}\n", printable(warning));
    if (!subject.nan_scalars.empty())
        out += fmt::format("  warning: NaN scalars: {}\n", printable(nan_scalars_sentence(subject.nan_scalars)));
    // A budget without data has no figure: the reason stands in its place.
    for (const BudgetResult& r : results)
        out += fmt::format("  {:<4} {:<24} {:>8} (budget {:>8}; {})\n", r.passed ? "ok" : "FAIL", r.name,
            shown_value(r), figure(r, r.limit), worst_text(r));
    out += fmt::format("{} of {} budgets hold\n", results.size() - failures(results), results.size());
    return out;
}

std::string render_check_junit(const CheckSubject& subject, const std::vector<BudgetResult>& results)
{
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format(
        "<testsuites name=\"fp8scope check\" tests=\"{}\" failures=\"{}\">\n", results.size(), failures(results));
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n", xml_escaped(subject.trace),
        results.size(), failures(results));
    out += fmt::format("    <properties>\n      <property name=\"trace_finished\" value=\"{}\"/>\n"
                       "      <property name=\"dropped_records\" value=\"{}\"/>\n"
                       "      <property name=\"clipped_kernels\" value=\"{}\"/>\n",
        subject.recording.finished ? "true" : "false", subject.recording.dropped_records,
        subject.recording.clipped_kernels.count);
    if (!subject.reference.empty())
        out += fmt::format("      <property name=\"reference\" value=\"{}\"/>\n", xml_escaped(subject.reference));
    for (const std::string& warning : subject.warnings)
        out += fmt::format("      <property name=\"rank_warning\" value=\"{}\"/>\n", xml_escaped(warning));
    out += "    </properties>\n";
    for (const BudgetResult& r : results) {
        out += fmt::format("    <testcase classname=\"fp8scope.check\" name=\"{}\">\n", r.name);
        if (!r.passed)
            out += fmt::format("      <failure message=\"{}\"/>\n", xml_escaped(failure_text(r)));
        out += fmt::format("      <system-out>{} = {} (budget {}); {}</system-out>\n", r.name, shown_value(r),
            figure(r, r.limit), xml_escaped(worst_text(r)));
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

std::string render_check_markdown(const CheckSubject& subject, const std::vector<BudgetResult>& results)
{
    std::string out = fmt::format("### fp8scope check: {}\n\n", failures(results) == 0 ? "all budgets hold" : "FAILED");
    out += fmt::format("Trace: {}\n\n", markdown_code(subject.trace, MarkdownPlace::Text));
    if (!subject.reference.empty())
        out += fmt::format("Reference: {}\n\n", markdown_code(subject.reference, MarkdownPlace::Text));
    for (const std::string& warning : recording_warnings(subject.recording))
        out += fmt::format("**Warning:** {}.\n\n", markdown_escaped(warning));
    for (const std::string& warning : subject.warnings)
        out += fmt::format("**Warning:** {}.\n\n", markdown_escaped(warning));
    if (!subject.nan_scalars.empty())
        out += fmt::format(
            "**Warning:** NaN scalars: {}.\n\n", markdown_escaped(nan_scalars_sentence(subject.nan_scalars)));
    out += "| budget | value | limit | result | worst step |\n|---|---|---|---|---|\n";
    // worst_text() holds site labels from the trace: escaped, so that markup and "|" stay text in the cell.
    for (const BudgetResult& r : results)
        out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.name, shown_value(r), figure(r, r.limit),
            r.passed ? "ok" : "**FAIL**", markdown_escaped(worst_text(r)));
    return out;
}

} // namespace fp8scope::cli
