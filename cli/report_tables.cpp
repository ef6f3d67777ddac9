#include "report_tables.hpp"

#include "human_units.hpp"
#include "xml_escape.hpp"
#include "report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

double share(int64_t part, int64_t whole)
{
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string ns(double value)
{
    return format_duration_ns(static_cast<int64_t>(value + 0.5));
}

// "(10 of 57 names; the other 47: 3.2% of the time)" or "(all 4 names)".
std::string coverage(size_t shown, size_t names, int64_t rest_ns, int64_t total_ns)
{
    if (shown >= names)
        return fmt::format("all {} name{}", names, names == 1 ? "" : "s");
    return fmt::format("{} of {} names; the other {}: {:.1f}% of the time", shown, names, names - shown,
        100.0 * share(rest_ns, total_ns));
}

template <class Rows> int64_t rest_ns(const Rows& rows, size_t shown)
{
    int64_t rest = 0;
    for (size_t i = shown; i < rows.size(); ++i)
        rest += rows[i].total_ns;
    return rest;
}

} // namespace

std::string display_kernel_name(std::string_view name, size_t max_bytes)
{
    if (name.starts_with("void "))
        name.remove_prefix(5);
    // The argument list: the last '(' at template depth 0 when the name ends with ')'.
    if (name.ends_with(')')) {
        int depth = 0;
        for (size_t i = 0; i < name.size(); ++i) {
            if (name[i] == '<')
                ++depth;
            else if (name[i] == '>')
                depth = std::max(0, depth - 1);
            else if (name[i] == '(' && depth == 0 && i > 0) {
                name = name.substr(0, i);
                break;
            }
        }
    }
    return shortened(printable(name), max_bytes);
}

void top_kernels_text(
    std::string& out, const TraceModel& model, const Report& report, size_t top, std::string_view heading)
{
    const KernelTableResult& t = report.top_kernels;
    const size_t shown = std::min(top, t.rows.size());
    out += fmt::format("\n{} (whole trace, most time first, as nsys stats' cuda_gpu_kern_sum; {})\n", heading,
        coverage(shown, t.rows.size(), rest_ns(t.rows, shown), t.total_ns));
    if (shown == 0)
        return;
    out += fmt::format("  {:>6} {:>11} {:>8} {:>11} {:>11} {:>11}  {:<13} {}\n", "time%", "total", "count", "mean",
        "min", "max", "class", "name");
    for (size_t i = 0; i < shown; ++i) {
        const KernelTableRow& r = t.rows[i];
        out += fmt::format("  {:>5.1f}% {:>11} {:>8} {:>11} {:>11} {:>11}  {:<13} {}\n",
            100.0 * share(r.total_ns, t.total_ns), format_duration_ns(r.total_ns), r.count, ns(r.mean_ns),
            format_duration_ns(r.min_ns), format_duration_ns(r.max_ns), kernel_class_label(r.cls),
            display_kernel_name(model.strings[r.name]));
    }
}

void top_api_text(std::string& out, const TraceModel& model, const Report& report, size_t top, std::string_view heading)
{
    const ApiTableResult& t = report.api_summary;
    const size_t shown = std::min(top, t.rows.size());
    out += fmt::format("\n{} (whole trace, most time first, as nsys stats' cuda_api_sum; {})\n", heading,
        coverage(shown, t.rows.size(), rest_ns(t.rows, shown), t.total_ns));
    if (shown == 0)
        return;
    out += fmt::format(
        "  {:>6} {:>11} {:>8} {:>11} {:>11} {:>11}  {}\n", "time%", "total", "calls", "mean", "min", "max", "name");
    for (size_t i = 0; i < shown; ++i) {
        const ApiTableRow& r = t.rows[i];
        out += fmt::format("  {:>5.1f}% {:>11} {:>8} {:>11} {:>11} {:>11}  {}\n", 100.0 * share(r.total_ns, t.total_ns),
            format_duration_ns(r.total_ns), r.count, ns(r.mean_ns), format_duration_ns(r.min_ns),
            format_duration_ns(r.max_ns), printable(api_display_name(model.strings[r.name])));
    }
}

std::string top_tables_markdown(const TraceModel& model, const Report& report, size_t top)
{
    const KernelTableResult& k = report.top_kernels;
    const size_t kernels_shown = std::min(top, k.rows.size());
    std::string out = fmt::format("\n### Top kernels\n\nWhole trace, most time first ({}).\n\n",
        coverage(kernels_shown, k.rows.size(), rest_ns(k.rows, kernels_shown), k.total_ns));
    if (kernels_shown > 0)
        out += "| time | total | count | mean | min | max | class | name |\n|---|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < kernels_shown; ++i) {
        const KernelTableRow& r = k.rows[i];
        out += fmt::format("| {:.1f}% | {} | {} | {} | {} | {} | {} | {} |\n", 100.0 * share(r.total_ns, k.total_ns),
            format_duration_ns(r.total_ns), r.count, ns(r.mean_ns), format_duration_ns(r.min_ns),
            format_duration_ns(r.max_ns), kernel_class_label(r.cls),
            markdown_code(display_kernel_name(model.strings[r.name]), MarkdownPlace::TableCell));
    }
    const ApiTableResult& a = report.api_summary;
    const size_t api_shown = std::min(top, a.rows.size());
    out += fmt::format("\n### Top CUDA API calls\n\nWhole trace, most time first ({}).\n\n",
        coverage(api_shown, a.rows.size(), rest_ns(a.rows, api_shown), a.total_ns));
    if (api_shown > 0)
        out += "| time | total | calls | mean | min | max | name |\n|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < api_shown; ++i) {
        const ApiTableRow& r = a.rows[i];
        out += fmt::format("| {:.1f}% | {} | {} | {} | {} | {} | {} |\n", 100.0 * share(r.total_ns, a.total_ns),
            format_duration_ns(r.total_ns), r.count, ns(r.mean_ns), format_duration_ns(r.min_ns),
            format_duration_ns(r.max_ns),
            markdown_code(std::string(api_display_name(model.strings[r.name])), MarkdownPlace::TableCell));
    }
    return out;
}

nlohmann::ordered_json top_kernels_json(const TraceModel& model, const Report& report, size_t top)
{
    const KernelTableResult& t = report.top_kernels;
    auto rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i) {
        const KernelTableRow& r = t.rows[i];
        rows.push_back({ { "name", model.strings[r.name] },
            { "display_name", display_kernel_name(model.strings[r.name]) }, { "class", kernel_class_id(r.cls) },
            { "count", r.count }, { "total_ns", r.total_ns }, { "mean_ns", r.mean_ns }, { "min_ns", r.min_ns },
            { "max_ns", r.max_ns }, { "stddev_ns", r.stddev_ns }, { "share", share(r.total_ns, t.total_ns) } });
    }
    return { { "names", t.rows.size() }, { "kernels", t.kernels }, { "total_ns", t.total_ns }, { "rows", rows } };
}

nlohmann::ordered_json top_api_json(const TraceModel& model, const Report& report, size_t top)
{
    const ApiTableResult& t = report.api_summary;
    auto rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i) {
        const ApiTableRow& r = t.rows[i];
        rows.push_back({ { "name", model.strings[r.name] },
            { "display_name", api_display_name(model.strings[r.name]) }, { "driver", r.driver },
            { "count", r.count }, { "total_ns", r.total_ns }, { "mean_ns", r.mean_ns }, { "min_ns", r.min_ns },
            { "max_ns", r.max_ns }, { "stddev_ns", r.stddev_ns }, { "share", share(r.total_ns, t.total_ns) } });
    }
    return { { "names", t.rows.size() }, { "calls", t.calls }, { "total_ns", t.total_ns }, { "rows", rows } };
}

} // namespace fp8scope::cli
