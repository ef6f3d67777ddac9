// `fp8scope compare --format html`: one self-contained page (inline CSS and SVG, no script, no external resource) to
// keep as a CI artifact, also well-formed XML. Every string from the traces goes through xml_escaped().
#include "compare/compare_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/html_page.hpp"
#include "output/present_names.hpp"
#include "output/svg_chart.hpp"
#include "output/xml_escape.hpp"
#include "report/report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

constexpr size_t kMaxHtmlRows = 500; // per table; the JSON output has every row
constexpr size_t kMaxCommandLineBytes = 300;

std::string traces_table(const CompareInput& input)
{
    std::string out = "<h2>Traces</h2>\n<table>\n<tr><th></th><th>run</th><th>reference</th></tr>\n";
    const auto row = [&](std::string_view name, const std::string& run, const std::string& ref) {
        out += fmt::format("<tr><th>{}</th>{}{}</tr>\n", name, html_cell(run), html_cell(ref));
    };
    const TraceModel& run = input.run_model;
    const TraceModel& ref = input.ref_model;
    row("path", run.path, ref.path);
    row("producer", run.meta.producer, ref.meta.producer);
    row("command line", shortened(run.meta.command_line, kMaxCommandLineBytes),
        shortened(ref.meta.command_line, kMaxCommandLineBytes));
    row("steps", steps_sentence(input.run_report.steps), steps_sentence(input.ref_report.steps));
    row("recording", recording_sentence(input.run_report.recording), recording_sentence(input.ref_report.recording));
    return out + "</table>\n";
}

std::string summary_table(const CompareResult& r)
{
    const CompareVerdict verdict = default_compare_verdict(r);
    std::string out = "<h2>Summary</h2>\n<table>\n";
    out += html_check_row("drift", drift_sentence(r, xml_escaped), !verdict.drift.passed);
    out += html_check_row("loss", loss_sentence(r.loss, xml_escaped), !verdict.loss.passed);
    out += html_check_row("steps", xml_escaped(alignment_sentence(r.alignment)), false);
    if (const std::string recording = recording_inflation_sentence(r.performance); !recording.empty())
        out += html_check_row("recording", xml_escaped(recording), true);
    if (!r.numerics_compared())
        return out + "</table>\n";
    out += html_check_row(amax_ratio_event_title(),
        compare_events_text(r.amax_ratio_events, r.first_amax_ratio_events, xml_escaped), false);
    out += html_check_row("stale scale against the reference",
        compare_events_text(r.stale_scale_events, r.first_stale_scale_events, xml_escaped), r.stale_scale_events > 0);
    return out + "</table>\n";
}

// The first divergent site's log2(amax run / amax reference) per common step: where it leaves 0 is the drift.
std::string divergence_chart(const CompareResult& r)
{
    if (!r.first_divergent)
        return "";
    const CompareSite& site = r.sites.at(*r.first_divergent);
    svg::LineChart chart;
    chart.description = "log2 amax ratio of the first divergent site per step";
    chart.series_name = "log2(amax run / amax reference)";
    chart.color = "#1f77b4";
    for (const CompareStep& s : site.steps)
        if (s.log2_amax_ratio)
            chart.points.push_back({ fmt::format("step {}", s.step), static_cast<double>(s.step), *s.log2_amax_ratio });
    chart.reference_levels = { kAmaxRatioEventLog2, -kAmaxRatioEventLog2 };
    chart.reference_label = fmt::format("amax-ratio event beyond ±{:g}", kAmaxRatioEventLog2);
    if (site.onset_step) {
        chart.marker_x = static_cast<double>(*site.onset_step);
        chart.marker_label = fmt::format("onset, step {}", *site.onset_step);
    }
    chart.format_value = [](double v) { return fmt::format("{:.3g}", v); };
    chart.x_title = fmt::format("{} steps with both amax values", chart.points.size());
    return fmt::format("<section class=\"chart\">\n<h3>First divergent site: {}</h3>\n{}<p class=\"note\">{}</p>\n"
                       "</section>\n",
        xml_escaped(site.label), svg::line_chart(chart),
        xml_escaped(fmt::format("log2 of the run's amax over the reference's at each common step; 0 is the same "
                                "range, 1 twice it. Evidence: {}.",
            site_evidence_text(site))));
}

std::string sites_table(const CompareResult& r, const std::vector<size_t>& order, bool evidence)
{
    std::string out = "<table>\n<tr><th>site</th><th>role</th><th>recipe</th><th>onset</th>"
                      "<th>amax-ratio events</th><th>stale-scale steps</th><th>baseline log2 ratio</th>";
    out += evidence ? "<th>evidence</th></tr>\n" : "</tr>\n";
    for (size_t k = 0; k < order.size() && k < kMaxHtmlRows; ++k) {
        const CompareSite& s = r.sites.at(order[k]);
        const std::string role = s.logical_role ? fmt::format("{} ({})", s.role, *s.logical_role) : s.role;
        out += "<tr>" + html_site_cell(s.label) + html_cell(role) + html_cell(recipe_text(s))
            + html_cell(s.onset_step ? fmt::to_string(*s.onset_step) : "-")
            + html_num(fmt::to_string(s.amax_ratio_events)) + html_num(fmt::to_string(s.stale_scale_events))
            + html_num(s.baseline_log2_ratio ? fmt::format("{:.3g}", *s.baseline_log2_ratio) : "-")
            + (evidence ? html_cell(site_evidence_text(s)) : std::string()) + "</tr>\n";
    }
    return out + "</table>\n";
}

std::string rows_note(size_t rows)
{
    return rows > kMaxHtmlRows ? fmt::format(" (the first {} of {}; the JSON output has all)", kMaxHtmlRows, rows) : "";
}

std::string loss_section(const LossComparison& loss)
{
    std::string out = "<h2>Loss</h2>\n<p>" + loss_sentence(loss, xml_escaped) + ".</p>\n";
    if (!loss.steps.empty()) {
        out += fmt::format("<details>\n<summary>Per step ({} common steps{})</summary>\n<table class=\"n\">\n"
                           "<tr><th>step</th><th>run</th><th>reference</th><th>relative delta</th></tr>\n",
            loss.steps.size(), rows_note(loss.steps.size()));
        for (size_t i = 0; i < loss.steps.size() && i < kMaxHtmlRows; ++i) {
            const LossStep& s = loss.steps[i];
            out += fmt::format("<tr><td>{}</td><td>{:.6g}</td><td>{:.6g}</td><td>{}</td></tr>\n", s.step, s.run, s.ref,
                delta_percent(s.relative_delta));
        }
        out += "</table>\n</details>\n";
    }
    out += "<p class=\"note\">The loss thresholds follow:</p>\n<ul class=\"note\">\n";
    for (const std::string_view source : kLossThresholdSources)
        out += "<li>" + xml_escaped(source) + "</li>\n";
    return out + "</ul>\n";
}

std::string kernel_lists_html(const PerformanceComparison& p)
{
    std::string out;
    for (const KernelList& list : kernel_lists(p)) {
        out += "<h3>" + xml_escaped(list.title) + "</h3>\n";
        if (list.rows.empty())
            continue;
        out += "<table>\n<tr><th>run</th><th>reference</th><th>change</th><th>per step, run</th>"
               "<th>per step, reference</th><th>class</th><th>kernel</th></tr>\n";
        for (const KernelListRow& k : list.rows)
            out += "<tr>" + html_num(k.run) + html_num(k.ref) + html_num(k.change) + html_num(k.run_count)
                + html_num(k.ref_count) + html_cell(k.cls)
                + fmt::format("<td title=\"{}\"><code>{}</code></td></tr>\n", xml_escaped(k.name),
                    xml_escaped(display_kernel_name(k.name)));
        out += "</table>\n";
    }
    return out;
}

std::string performance_table(const PerformanceComparison& p, const PairIdentity& identity)
{
    const std::string steps = xml_escaped(performance_steps_text(p));
    std::string out = "<h2>Performance</h2>\n<p class=\"note\">Per step, means over " + steps
        + "; GEMM time is FP8 and other GEMM kernels, bookkeeping the cast/quantize and amax/scale kernels.</p>\n"
          "<table>\n<tr><th></th><th>run</th><th>reference</th><th>difference</th></tr>\n";
    for (const PerformanceRow& row : performance_rows(p, identity.performance_only.empty()))
        out += fmt::format("<tr><th>{}</th>{}{}{}</tr>\n", xml_escaped(row.what), html_num(row.run), html_num(row.ref),
            html_cell(row.change));
    out += "</table>\n<h3>Per step</h3>\n<p class=\"note\">Over " + steps
        + ": medians, then idle by cause and kernel time by class (means per step).</p>\n<table>\n<tr><th></th>"
          "<th>run</th><th>reference</th><th>change</th></tr>\n";
    for (const PerformanceRow& row : per_step_rows(p))
        out += fmt::format("<tr><th>{}</th>{}{}{}</tr>\n", xml_escaped(row.what), html_num(row.run), html_num(row.ref),
            html_num(row.change));
    out += "</table>\n" + kernel_lists_html(p);
    if (const std::string not_split = price_not_split_sentence(identity, xml_escaped); !not_split.empty())
        return out + "<h3>FP8's price</h3>\n<p>" + not_split + ".</p>\n";
    out += "<h3>FP8's price</h3>\n<p class=\"note\">Per step: the traced step change in four parts.</p>\n"
           "<table>\n<tr><th>part</th><th>per step</th><th>share of the change</th><th></th></tr>\n";
    for (const PriceRow& row : fp8_price_rows(p))
        out += fmt::format("<tr><th>{}</th>{}{}{}</tr>\n", xml_escaped(row.what), html_num(row.per_step),
            html_num(row.share), html_cell(row.note));
    out += "</table>\n<p>" + xml_escaped(fp8_price_sentence(p)) + "; " + xml_escaped(recording_cost_sentence(p))
        + ".</p>\n<p>What would win it back, per step:</p>\n<ul>\n";
    for (const RecoveryRow& row : fp8_recovery_rows(p))
        out += "<li>" + xml_escaped(row.fix) + ": " + xml_escaped(row.recovers) + " (" + xml_escaped(row.how)
            + ")</li>\n";
    return out + "</ul>\n";
}

std::string unmatched_list(std::string_view side, const std::vector<UnmatchedSite>& sites)
{
    if (sites.empty())
        return "";
    std::string out
        = fmt::format("<h3>Unmatched in {} ({}{})</h3>\n<ul>\n", side, sites.size(), rows_note(sites.size()));
    const std::vector<UnmatchedGroup> groups = unmatched_groups(sites);
    for (size_t i = 0; i < groups.size() && i < kMaxHtmlRows; ++i)
        out += "<li>"
            + unmatched_group_text(
                groups[i], [](std::string_view label) { return "<code>" + xml_escaped(label) + "</code>"; },
                [](std::string_view text) { return xml_escaped(text); })
            + "</li>\n";
    return out + "</ul>\n";
}

std::string sites_section(const CompareResult& r)
{
    std::string out = "<h2>Sites</h2>\n<p>" + xml_escaped(matching_sentence(r)) + "; "
        + xml_escaped(role_normalisation_sentence(r))
        + ".</p>\n<p>Scaling recipe of the run's FP8 sites: " + xml_escaped(recipe_sentence(r)) + ".</p>\n";
    std::vector<size_t> all(r.sites.size());
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = i;
    out += fmt::format("<details>\n<summary>Matched sites ({}{})</summary>\n", all.size(), rows_note(all.size()))
        + sites_table(r, all, false) + "</details>\n";
    return out + unmatched_list("the run", r.run_unmatched) + unmatched_list("the reference", r.ref_unmatched);
}

} // namespace

std::string render_compare_html(const CompareInput& input, const CompareResult& r)
{
    std::string out
        = html_page_start(fmt::format("fp8scope compare: {} against {}", input.run_model.path, input.ref_model.path));
    out += fmt::format("<h1>fp8scope compare</h1>\n<p>Run <code>{}</code> against the reference <code>{}</code></p>\n",
        xml_escaped(input.run_model.path), xml_escaped(input.ref_model.path));
    out += "<ul class=\"pair\">\n";
    for (const PairLine& line : pair_lines(r.identity, xml_escaped))
        out += "<li><strong>" + line.label + ":</strong> " + line.text + "</li>\n";
    out += "</ul>\n";
    out += fmt::format("<p class=\"{}\">{}</p>\n", default_compare_verdict(r).healthy() ? "ok" : "bad",
        verdict_sentence(r, xml_escaped));
    out += summary_table(r) + traces_table(input);
    if (!r.flagged.empty()) {
        out += fmt::format("<h2>Drifting sites</h2>\n<p class=\"note\">{} sites, earliest onset first{}.</p>\n",
            r.flagged.size(), rows_note(r.flagged.size()));
        out += divergence_chart(r) + sites_table(r, r.flagged, true);
    }
    if (r.numerics_compared())
        out += loss_section(r.loss);
    out += performance_table(r.performance, r.identity);
    if (r.numerics_compared())
        out += sites_section(r) + "<h2>Thresholds</h2>\n<p>" + xml_escaped(compare_thresholds_sentence()) + ".</p>\n";
    return out + "<p class=\"note\">Written by fp8scope compare --format html.</p>\n" + std::string(kHtmlPageEnd);
}

} // namespace fp8scope::cli
