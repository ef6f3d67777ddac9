#include "report/report_tables.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"

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

namespace {

// A demangled name without its leading "void " and its argument list.
std::string_view kernel_name_core(std::string_view name)
{
    if (name.starts_with("void "))
        name.remove_prefix(5);
    // The argument list: the '(' matching the final ')', found from the end ("(anonymous namespace)" inside the name
    // stays).
    if (name.ends_with(')')) {
        int depth = 0;
        for (size_t i = name.size(); i-- > 0;) {
            if (name[i] == ')')
                ++depth;
            else if (name[i] == '(' && --depth == 0) {
                if (i > 0)
                    name = name.substr(0, i);
                break;
            }
        }
    }
    return name;
}

} // namespace

std::string display_kernel_name(std::string_view name, size_t max_bytes)
{
    const std::string shown = printable(kernel_name_core(name));
    return max_bytes == 0 ? shown : shortened(shown, max_bytes);
}

std::vector<std::string> distinct_kernel_names(std::span<const std::string_view> names, size_t max_bytes)
{
    std::vector<std::string_view> core;
    std::vector<std::string> out;
    for (const std::string_view name : names) {
        core.push_back(kernel_name_core(name));
        out.push_back(display_kernel_name(name, max_bytes));
    }
    if (max_bytes == 0)
        return out;
    const std::vector<std::string> cut = out;
    for (size_t i = 0; i < names.size(); ++i) {
        // Where this name first differs from every other whose cut reads the same.
        size_t differs_at = 0;
        for (size_t j = 0; j < names.size(); ++j) {
            if (j == i || cut[j] != cut[i] || core[j] == core[i])
                continue;
            const auto [a, b] = std::ranges::mismatch(core[i], core[j]);
            differs_at = std::max(differs_at, static_cast<size_t>(a - core[i].begin()));
        }
        if (differs_at == 0)
            continue;
        // The head, then the part from a little before the difference: cut in the middle, where they differ.
        constexpr size_t kBefore = 12;
        const size_t head = max_bytes / 3;
        const size_t from = std::max(head, differs_at > kBefore ? differs_at - kBefore : 0);
        const std::string tail = printable(core[i].substr(std::min(from, core[i].size())));
        // At most max_bytes and one ellipsis' 3 bytes, as a plain cut: the middle one's bytes come off the tail.
        constexpr size_t kEllipsisBytes = 3;
        const size_t tail_bytes = max_bytes > head + kEllipsisBytes ? max_bytes - head - kEllipsisBytes : 1;
        out[i] = printable(core[i].substr(0, head)) + "…" + shortened(tail, tail_bytes);
    }
    return out;
}

std::vector<std::string> top_kernel_display_names(
    const TraceModel& model, const Report& report, size_t top, size_t max_bytes)
{
    const KernelTableResult& t = report.top_kernels;
    std::vector<std::string_view> names;
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i)
        names.push_back(model.strings[t.rows[i].name]);
    return distinct_kernel_names(names, max_bytes);
}

void top_kernels_text(std::string& out, const TraceModel& model, const Report& report, size_t top,
    std::string_view heading, size_t name_bytes)
{
    const KernelTableResult& t = report.top_kernels;
    const size_t shown = std::min(top, t.rows.size());
    const std::vector<std::string> names = top_kernel_display_names(model, report, top, name_bytes);
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
            format_duration_ns(r.min_ns), format_duration_ns(r.max_ns), kernel_class_label(r.cls), names[i]);
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

namespace {

// One table in Markdown: its heading, the coverage sentence and the rows; `extra` adds the columns after max.
template <class Result, class Extra>
void markdown_table(std::string& out, std::string_view heading, std::string_view count_heading,
    std::string_view extra_headings, const Result& t, size_t top, Extra&& extra)
{
    const size_t shown = std::min(top, t.rows.size());
    out += fmt::format("\n### {}\n\nWhole trace, most time first ({}).\n\n", heading,
        coverage(shown, t.rows.size(), rest_ns(t.rows, shown), t.total_ns));
    if (shown > 0) {
        out += fmt::format(
            "| time | total | {} | mean | min | max | {} |\n|---|---|---|---|---|---|", count_heading, extra_headings);
        for (size_t c = 0, n = static_cast<size_t>(std::ranges::count(extra_headings, '|')) + 1; c < n; ++c)
            out += "---|";
        out += "\n";
    }
    for (size_t i = 0; i < shown; ++i) {
        const auto& r = t.rows[i];
        out += fmt::format("| {:.1f}% | {} | {} | {} | {} | {} | {} |\n", 100.0 * share(r.total_ns, t.total_ns),
            format_duration_ns(r.total_ns), r.count, ns(r.mean_ns), format_duration_ns(r.min_ns),
            format_duration_ns(r.max_ns), extra(r));
    }
}

} // namespace

std::string top_tables_markdown(const TraceModel& model, const Report& report, size_t top)
{
    std::string out;
    const std::vector<std::string> names = top_kernel_display_names(model, report, top);
    markdown_table(out, "Top kernels", "count", "class | name", report.top_kernels, top, [&](const KernelTableRow& r) {
        return fmt::format("{} | {}", kernel_class_label(r.cls),
            markdown_code(names[static_cast<size_t>(&r - report.top_kernels.rows.data())], MarkdownPlace::TableCell));
    });
    markdown_table(out, "Top CUDA API calls", "calls", "name", report.api_summary, top, [&](const ApiTableRow& r) {
        return markdown_code(std::string(api_display_name(model.strings[r.name])), MarkdownPlace::TableCell);
    });
    return out;
}

namespace {

template <class Result, class Extra>
void html_table(std::string& out, std::string_view heading, std::string_view count_heading,
    std::string_view extra_headings, const Result& t, size_t top, Extra&& extra)
{
    const size_t shown = std::min(top, t.rows.size());
    out += fmt::format("<h2>{}</h2>\n<p>Whole trace, most time first ({}).</p>\n", heading,
        xml_escaped(coverage(shown, t.rows.size(), rest_ns(t.rows, shown), t.total_ns)));
    if (shown == 0)
        return;
    out += fmt::format(
        "<table>\n<tr><th>time</th><th>total</th><th>{}</th><th>mean</th><th>min</th><th>max</th>{}</tr>\n",
        count_heading, extra_headings);
    for (size_t i = 0; i < shown; ++i) {
        const auto& r = t.rows[i];
        out += fmt::format("<tr><td class=\"num\">{:.1f}%</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                           "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>\n",
            100.0 * share(r.total_ns, t.total_ns), format_duration_ns(r.total_ns), r.count, ns(r.mean_ns),
            format_duration_ns(r.min_ns), format_duration_ns(r.max_ns), extra(r));
    }
    out += "</table>\n";
}

} // namespace

std::string top_tables_html(const TraceModel& model, const Report& report, size_t top)
{
    std::string out;
    const std::vector<std::string> names = top_kernel_display_names(model, report, top);
    html_table(out, "Top kernels", "count", "<th>class</th><th>name</th>", report.top_kernels, top,
        [&](const KernelTableRow& r) {
            const std::string_view name = model.strings[r.name];
            return fmt::format("<td>{}</td><td title=\"{}\"><code>{}</code></td>", kernel_class_label(r.cls),
                xml_escaped(name), xml_escaped(names[static_cast<size_t>(&r - report.top_kernels.rows.data())]));
        });
    html_table(out, "Top CUDA API calls", "calls", "<th>name</th>", report.api_summary, top, [&](const ApiTableRow& r) {
        // The name as the program called it, no CUPTI version suffix (the JSON keeps the recorded one).
        return fmt::format("<td><code>{}</code></td>", xml_escaped(api_display_name(model.strings[r.name])));
    });
    return out;
}

namespace {

// A row's figures in JSON, after the keys `first` gives.
template <class Row> nlohmann::ordered_json row_json(nlohmann::ordered_json first, const Row& r, int64_t total_ns)
{
    first.update({ { "count", r.count }, { "total_ns", r.total_ns }, { "mean_ns", r.mean_ns }, { "min_ns", r.min_ns },
        { "max_ns", r.max_ns }, { "stddev_ns", r.stddev_ns }, { "share", share(r.total_ns, total_ns) } });
    return first;
}

} // namespace

nlohmann::ordered_json top_kernels_json(const TraceModel& model, const Report& report, size_t top)
{
    const KernelTableResult& t = report.top_kernels;
    auto rows = nlohmann::ordered_json::array();
    const std::vector<std::string> names = top_kernel_display_names(model, report, top);
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i) {
        const KernelTableRow& r = t.rows[i];
        rows.push_back(row_json(
            { { "name", model.strings[r.name] }, { "display_name", names[i] }, { "class", kernel_class_id(r.cls) } }, r,
            t.total_ns));
    }
    return { { "names", t.rows.size() }, { "kernels", t.kernels }, { "total_ns", t.total_ns }, { "rows", rows } };
}

nlohmann::ordered_json top_api_json(const TraceModel& model, const Report& report, size_t top)
{
    const ApiTableResult& t = report.api_summary;
    auto rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i) {
        const ApiTableRow& r = t.rows[i];
        rows.push_back(
            row_json({ { "name", model.strings[r.name] }, { "display_name", api_display_name(model.strings[r.name]) },
                         { "driver", r.driver } },
                r, t.total_ns));
    }
    return { { "names", t.rows.size() }, { "calls", t.calls }, { "total_ns", t.total_ns }, { "rows", rows } };
}

} // namespace fp8scope::cli
