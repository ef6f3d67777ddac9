// `fp8scope compare --format junit`: the comparison as JUnit XML for CI test-report views. One testsuite,
// "fp8scope.compare", with two testcases that a CI can keep a history of: drift (failed when a site drifts; the
// message names the first divergent site and its onset) and loss_delta (failed when the loss delta is above
// kLossDeltaThreshold, or cannot be computed). The verdicts are the analyzer's default gate; `compare` still exits
// 0, since `check --ref` is the gate.
#include "compare/compare_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

void property(std::string& out, std::string_view name, const std::string& value)
{
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escaped(value));
}

std::string properties(const CompareInput& input, const CompareResult& r)
{
    std::string out = "    <properties>\n";
    property(out, "run", input.run_model.path);
    property(out, "reference", input.ref_model.path);
    property(out, "common_steps", fmt::to_string(r.alignment.common.size()));
    property(out, "matched_sites", fmt::to_string(r.sites.size()));
    property(out, "run_unmatched_sites", fmt::to_string(r.run_unmatched.size()));
    property(out, "ref_unmatched_sites", fmt::to_string(r.ref_unmatched.size()));
    property(out, "drifting_sites", fmt::to_string(r.flagged.size()));
    if (r.first_divergent) {
        const CompareSite& first = r.sites.at(*r.first_divergent);
        property(out, "first_divergent_site", first.label);
        property(out, "first_divergent_onset_step", first.onset_step ? fmt::to_string(*first.onset_step) : "");
    }
    property(out, "amax_ratio_events", fmt::to_string(r.amax_ratio_events));
    property(out, "stale_scale_events", fmt::to_string(r.stale_scale_events));
    property(out, "loss_scalar", r.loss.scalar);
    property(out, "loss_final_relative_delta",
        r.loss.final_relative_delta ? fmt::format("{:.6g}", *r.loss.final_relative_delta) : "");
    property(out, "loss_delta_threshold", fmt::format("{:g}", kLossDeltaThreshold));
    property(out, "loss_delta_strict", fmt::format("{:g}", kLossDeltaStrict));
    property(out, "run_step_ns", fmt::format("{:.0f}", r.performance.run.step_ns));
    property(out, "ref_step_ns", fmt::format("{:.0f}", r.performance.ref.step_ns));
    property(out, "net_gain_ns", fmt::format("{:.0f}", r.performance.net_gain_ns));
    property(out, "step_change_ns", fmt::format("{:.0f}", r.performance.step_change_ns));
    property(out, "launch_idle_added_ns", fmt::format("{:.0f}", r.performance.launch_idle_added_ns));
    property(out, "fp8_price_explained_share",
        r.performance.explained_share ? fmt::format("{:.4f}", *r.performance.explained_share) : "");
    // The performance per step (compare_performance.hpp), which needs no tensor statistics.
    const PerformanceComparison& p = r.performance;
    property(out, "numerics_compared", r.numerics_compared() ? "true" : "false");
    if (!r.numerics_compared())
        property(out, "numerics_not_compared", r.numerics_not_compared);
    property(out, "run_step_median_ns", fmt::format("{:.0f}", p.step_median_ns.run));
    property(out, "ref_step_median_ns", fmt::format("{:.0f}", p.step_median_ns.ref));
    property(out, "run_bubble_ratio_median", fmt::format("{:.4f}", p.bubble_ratio_median.run));
    property(out, "ref_bubble_ratio_median", fmt::format("{:.4f}", p.bubble_ratio_median.ref));
    property(out, "kernels_appeared", fmt::to_string(p.kernels.appeared_names));
    property(out, "kernels_vanished", fmt::to_string(p.kernels.vanished_names));
    property(out, "recording_inflation_ns", p.recording.notable ? fmt::format("{:.0f}", p.recording.inflation_ns) : "");
    property(out, "thresholds", compare_thresholds_sentence());
    for (const PairLine& line : pair_lines(r.identity, as_is)) {
        std::string name = "pair_" + line.label; // pair_gpu, pair_job, pair_model, pair_precision, pair_order
        std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        property(out, name, line.text);
    }
    return out + "    </properties>\n";
}

// A testcase: passed with `details` as its output, or failed with `message` and `details` as the failure's text.
std::string testcase(std::string_view area, std::string_view name, bool passed, const std::string& message,
    const std::vector<std::string>& details)
{
    std::string text;
    for (const std::string& line : details) {
        // Escaped line by line: xml_escaped() shows a newline as \x0a. Appended piece by piece (GCC bug 105329).
        if (!text.empty())
            text += '\n';
        text += xml_escaped(line);
    }
    std::string out
        = fmt::format("    <testcase classname=\"fp8scope.compare.{}\" name=\"{}\" time=\"0\">\n", area, name);
    if (passed)
        out += fmt::format("      <system-out>{}</system-out>\n", text);
    else
        out += fmt::format(
            "      <failure type=\"{}\" message=\"{}\">{}</failure>\n", name, xml_escaped(message), text);
    return out + "    </testcase>\n";
}

std::vector<std::string> drift_details(const CompareResult& r)
{
    if (!r.numerics_compared())
        return { numerics_not_compared_sentence(r), alignment_sentence(r.alignment) };
    std::vector<std::string> lines { matching_sentence(r), alignment_sentence(r.alignment) };
    for (size_t k = 0; k < r.flagged.size() && k < kListedCompareSites; ++k) {
        const CompareSite& s = r.sites.at(r.flagged[k]);
        lines.push_back(fmt::format("{} {}: {}", s.label, onset_text(s.onset_step), site_evidence_text(s)));
    }
    if (r.flagged.size() > kListedCompareSites)
        lines.push_back(fmt::format("… and {} more", r.flagged.size() - kListedCompareSites));
    lines.push_back(
        amax_ratio_event_title() + ": " + compare_events_text(r.amax_ratio_events, r.first_amax_ratio_events, as_is));
    lines.push_back("stale scale: " + compare_events_text(r.stale_scale_events, r.first_stale_scale_events, as_is));
    return lines;
}

} // namespace

std::string render_compare_junit(const CompareInput& input, const CompareResult& r)
{
    const CompareVerdict verdict = default_compare_verdict(r);
    const std::string loss = loss_sentence(r.loss, as_is);
    const size_t failures = (verdict.drift.passed ? 0 : 1) + (verdict.loss.passed ? 0 : 1);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format(
        "<testsuites name=\"fp8scope compare\" tests=\"2\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n", failures);
    out += fmt::format("  <testsuite name=\"fp8scope.compare\" tests=\"2\" failures=\"{}\" errors=\"0\" skipped=\"0\" "
                       "time=\"0\">\n",
        failures);
    out += properties(input, r);
    out += testcase("drift", "drift", verdict.drift.passed, drift_sentence(r, as_is), drift_details(r));
    out += testcase("loss", "loss_delta", verdict.loss.passed,
        r.loss.final_relative_delta ? "above the threshold: " + loss : loss, { loss });
    return out + "  </testsuite>\n</testsuites>\n";
}

} // namespace fp8scope::cli
