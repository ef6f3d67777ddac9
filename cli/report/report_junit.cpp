// `fp8scope report --format junit`: the diagnosis as JUnit XML for CI test-report UIs. One testsuite,
// "fp8scope.report"; one testcase per analysis area (kFindingAreas), failed when the analyzer recommends a change
// there, with the estimated saving and the worst step; a fifth, tensor health, failed by a NaN/Inf or a stale
// scale and skipped without tensor statistics; the headline figures as <properties>. `report` is not a gate (it
// exits 0 either way): `check` is.
#include "report/report_render.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"
#include "report/report_tensor.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

void property(std::string& out, std::string_view name, const std::string& value)
{
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escaped(value));
}

std::string properties(const TraceModel& model, const Report& r, const WhatIf& w)
{
    const BubbleTotals& t = r.totals;
    const size_t steps = r.steps.steps.size();
    std::string out = "    <properties>\n";
    property(out, "trace", model.path);
    property(out, "trace_finished", r.recording.finished ? "true" : "false");
    property(out, "dropped_records", fmt::to_string(r.recording.dropped_records));
    property(out, "clipped_kernels", fmt::to_string(r.recording.clipped_kernels.count));
    property(out, "steps", fmt::to_string(steps));
    property(out, "steps_source", step_source_name(r.steps.source));
    property(out, "warmup_excluded", fmt::to_string(r.steps.warmup_excluded));
    property(out, "device", r.device ? fmt::to_string(*r.device) : "all");
    property(out, "launch_latency_epsilon_ns", fmt::to_string(r.bubbles.epsilon_ns));
    property(out, "launch_rule", launch_rule_sentence(r.bubbles));
    property(out, "collector_gpu_time_per_step_ns", fmt::to_string(int64_t(r.collector_work.time_per_step_ns())));
    property(out, "collector_work", collector_work_sentence(r.collector_work));
    property(out, "mean_step_ns", fmt::to_string(w.mean_step_ns));
    property(out, "bubble_ratio", fmt::format("{:.4f}", t.bubble_ratio));
    for (BubbleCause c : causes_to_show(r))
        property(out, fmt::format("idle_{}_share", bubble_cause_name(c)),
            fmt::format("{:.4f}", percent(t.cause_ns[static_cast<size_t>(c)], t.step_ns) / 100.0));
    property(out, "syncs_per_step",
        fmt::format("{:.2f}", steps ? static_cast<double>(r.syncs.total.count) / static_cast<double>(steps) : 0.0));
    property(out, "kernels_per_step", fmt::to_string(per_step(r.launch.kernels, steps)));
    property(out, "fp8_gemm_share", fmt::format("{:.4f}", r.kernel_classes.share_of_kernel_time(KernelClass::Fp8Gemm)));
    property(out, "min_recommendation_saving_share", fmt::format("{:g}", kMinRecommendationSavingShare));
    const TensorHealth& h = r.tensor_health;
    property(out, "tensor_samples", fmt::to_string(h.totals.samples));
    if (h.totals.samples > 0) {
        property(out, "tensor_nonfinite_samples", fmt::to_string(h.totals.nonfinite_samples));
        property(out, "tensor_stale_scale_samples", fmt::to_string(h.stale_scale.total));
    }
    return out + "    </properties>\n";
}

// What a passing area's testcase says: the figure behind its recommendation, found too small to recommend.
std::string passing_text(const Report& r, RecommendationKind kind)
{
    const auto worst = recommendation_worst_step(r, kind);
    if (!worst)
        return "no steps to analyse";
    if (worst->share <= 0)
        return fmt::format("no recommendation; no {} in any step", recommendation_figure(kind));
    return fmt::format("no recommendation; highest {} in a step: {:.1f}% (step {})", recommendation_figure(kind),
        100.0 * worst->share, worst->step_index);
}

std::string testcase(const Report& r, const FindingArea& area, const Recommendation* rec)
{
    std::string out = fmt::format("    <testcase classname=\"fp8scope.report.{}\" name=\"{}\" time=\"0\">\n", area.area,
        recommendation_kind_name(area.kind));
    if (rec == nullptr)
        return out
            + fmt::format(
                "      <system-out>{}</system-out>\n    </testcase>\n", xml_escaped(passing_text(r, area.kind)));
    const std::string where = worst_step_text(rec->worst_step, rec->kind);
    const std::string message = fmt::format("{}: saves up to {} per step ({:.1f}%); {}", rec->title,
        format_duration_ns(rec->saving_per_step_ns), 100.0 * rec->saving_share, where);
    out += fmt::format("      <failure type=\"{}\" message=\"{}\">{}\nbecause {}\nestimated saving per step: {} "
                       "({:.1f}% of a step, an upper bound)\n{}</failure>\n",
        recommendation_kind_name(rec->kind), xml_escaped(message), xml_escaped(rec->title), xml_escaped(rec->reason),
        format_duration_ns(rec->saving_per_step_ns), 100.0 * rec->saving_share, xml_escaped(where));
    return out + "    </testcase>\n";
}

// Tensor health: failed by a NaN/Inf in any sample (warm-up included) or a stale scale in the analysed steps, the
// two findings that mean the numbers are already wrong; skipped without tensor statistics, since a pass would vouch
// for numerics nobody measured. The other events and the worst saturation are in the text either way.
std::string tensor_testcase(const TensorHealth& h, size_t& failures, size_t& skipped)
{
    std::string out = "    <testcase classname=\"fp8scope.report.tensor_health\" name=\"tensor_health\" time=\"0\">\n";
    if (h.totals.samples == 0) {
        ++skipped;
        return out + "      <skipped message=\"the trace has no tensor statistics\"/>\n    </testcase>\n";
    }
    // xml_escaped() shows a newline as \x0a, so each line is escaped alone.
    std::vector<std::string> lines { tensor_totals_sentence(h),
        "first NaN/Inf: " + first_nonfinite_text(h, printable) };
    for (const TensorEventKind kind : kTensorEventKinds)
        lines.push_back(fmt::format("{}: {}", tensor_event_title(kind), tensor_event_text(h, kind, printable)));
    if (!h.top_saturation.empty()) {
        const TensorSiteHealth& s = h.sites[h.top_saturation.front()];
        lines.push_back(fmt::format("most saturation: {} in {}", worst_saturation_text(s), printable(s.label)));
    }
    if (!h.top_least_headroom.empty()) {
        const TensorSiteHealth& s = h.sites[h.top_least_headroom.front()];
        lines.push_back(fmt::format("least headroom: {} in {}", min_headroom_text(s), printable(s.label)));
    }
    lines.push_back("thresholds: " + tensor_thresholds_sentence());
    std::string details;
    for (const std::string& line : lines) {
        // Appended piece by piece: `"\n" + std::string` makes GCC 12's -Wrestrict misfire at -O3 (GCC bug 105329).
        if (!details.empty())
            details += '\n';
        details += xml_escaped(line);
    }
    std::vector<std::string> findings;
    if (h.first_nonfinite)
        findings.push_back("first NaN/Inf at " + first_nonfinite_text(h, printable));
    if (h.stale_scale.total > 0) {
        std::string stale = "stale scale: " + tensor_event_text(h, TensorEventKind::StaleScale, printable);
        // The first stale scale can be a small miss; the least headroom is where the cast clipped the most.
        if (!h.top_least_headroom.empty()) {
            const TensorSiteHealth& s = h.sites[h.top_least_headroom.front()];
            stale += fmt::format("; least headroom {} in {}", min_headroom_text(s), printable(s.label));
        }
        findings.push_back(std::move(stale));
    }
    if (findings.empty())
        return out + fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", details);
    ++failures;
    std::string message = findings.front();
    for (size_t i = 1; i < findings.size(); ++i)
        message += "; " + findings[i];
    out += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
        h.first_nonfinite ? "nonfinite" : "stale_scale", xml_escaped(message), details);
    return out + "    </testcase>\n";
}

} // namespace

std::string render_report_junit(const TraceModel& model, const Report& r)
{
    const WhatIf w = estimate_what_if(r);
    std::vector<std::string> cases;
    size_t failures = 0;
    for (const FindingArea& area : kFindingAreas) {
        const auto rec = std::ranges::find_if(
            w.recommendations, [&](const Recommendation& candidate) { return candidate.kind == area.kind; });
        const bool found = rec != w.recommendations.end();
        failures += found ? 1 : 0;
        cases.push_back(testcase(r, area, found ? &*rec : nullptr));
    }
    // A kind of recommendation added to the analyzer but not yet to kFindingAreas still gets its failed testcase.
    for (const Recommendation& rec : w.recommendations) {
        if (std::ranges::none_of(kFindingAreas, [&](const FindingArea& area) { return area.kind == rec.kind; })) {
            cases.push_back(testcase(r, FindingArea { "other", rec.kind }, &rec));
            ++failures;
        }
    }
    size_t skipped = 0;
    cases.push_back(tensor_testcase(r.tensor_health, failures, skipped));
    const size_t tests = cases.size();
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format(
        "<testsuites name=\"fp8scope report\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", tests,
        failures, skipped);
    out += fmt::format("  <testsuite name=\"fp8scope.report\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
                       "time=\"0\">\n",
        tests, failures, skipped);
    out += properties(model, r, w);
    for (const std::string& c : cases)
        out += c;
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

} // namespace fp8scope::cli
