#include "report/report_csv.hpp"

#include "fp8scope/present/figures.hpp"
#include "output/present_names.hpp"
#include "report/report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

constexpr std::string_view kRecordEnd = "\r\n"; // RFC 4180 §2.1

// A record from fields already formatted (numbers) or passed through csv_field() (text).
template <typename... Fields> void record(std::string& out, const Fields&... fields)
{
    bool first = true;
    ((out += first ? "" : ",", out += fields, first = false), ...);
    out += kRecordEnd;
}

// Shortest text that reads back as the same double (fmt's default), as the JSON report writes it.
std::string number(double value)
{
    return fmt::format("{}", value);
}

double share(int64_t part, int64_t whole)
{
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void steps_csv(std::string& out, const Report& r)
{
    std::string header = "device,step,start_ns,end_ns,step_ns,busy_ns,idle_ns,bubble_ratio,bubbles,top_cause";
    for (size_t c = 0; c < kBubbleCauseCount; ++c)
        header += fmt::format(",{}_ns", bubble_cause_name(static_cast<BubbleCause>(c)));
    out += header;
    out += kRecordEnd;
    for (const DeviceStepBubbles& d : r.bubbles.per_device_step) {
        if (r.device && d.device_id != *r.device)
            continue;
        const BubbleTotals& t = d.totals;
        std::string line = fmt::format("{},{},{},{},{},{},{},{},{},{}", d.device_id, d.step_index, d.step_start_ns,
            d.step_end_ns, t.step_ns, t.busy_ns, t.idle_ns, number(t.bubble_ratio), t.bubble_count,
            t.idle_ns > 0 ? bubble_cause_name(top_cause(t)) : "");
        for (int64_t ns : t.cause_ns)
            line += fmt::format(",{}", ns);
        out += line;
        out += kRecordEnd;
    }
}

// The figures every row of both tables has, after the row's own leading fields.
template <typename Row> std::string figures(const Row& row, int64_t total_ns)
{
    return fmt::format("{},{},{},{},{},{},{}", row.count, row.total_ns, number(row.mean_ns), row.min_ns, row.max_ns,
        number(row.stddev_ns), number(share(row.total_ns, total_ns)));
}

constexpr std::string_view kFigureColumns = "count,total_ns,mean_ns,min_ns,max_ns,stddev_ns,share";

// One of the two top tables: `leading_columns` and the fields `leading` gives a row, then the figures every row has.
template <typename Result, typename Leading>
void top_table_csv(std::string& out, std::string_view leading_columns, const Result& t, size_t top, Leading&& leading)
{
    record(out, leading_columns, kFigureColumns);
    for (size_t i = 0; i < std::min(top, t.rows.size()); ++i)
        record(out, leading(t.rows[i]), figures(t.rows[i], t.total_ns));
}

} // namespace

std::string csv_field(std::string_view text)
{
    if (text.find_first_of(",\"\r\n") == std::string_view::npos)
        return std::string(text);
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

std::string render_report_csv(const TraceModel& model, const Report& report, std::string_view table, size_t top)
{
    std::string out;
    if (table == "kernels") {
        const std::vector<std::string> names = top_kernel_display_names(model, report, top);
        top_table_csv(out, "name,short_name,class", report.top_kernels, top, [&](const KernelTableRow& row) {
            const std::string_view name = model.strings[row.name];
            return fmt::format("{},{},{}", csv_field(name),
                csv_field(names[static_cast<size_t>(&row - report.top_kernels.rows.data())]),
                csv_field(kernel_class_id(row.cls)));
        });
    } else if (table == "api")
        top_table_csv(out, "name,short_name,layer", report.api_summary, top, [&](const ApiTableRow& row) {
            const std::string_view name = model.strings[row.name];
            return fmt::format(
                "{},{},{}", csv_field(name), csv_field(api_display_name(name)), row.driver ? "driver" : "runtime");
        });
    else
        steps_csv(out, report);
    return out;
}

} // namespace fp8scope::cli
