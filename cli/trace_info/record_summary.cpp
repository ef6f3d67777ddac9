#include "trace_info/record_summary.hpp"

#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "trace_info/capture_notice.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <sys/stat.h>

namespace fp8scope::cli {

namespace {

std::optional<int64_t> size_on_disk_bytes(const std::string& path)
{
    struct stat file { };
    if (stat(path.c_str(), &file) != 0 || !S_ISREG(file.st_mode))
        return std::nullopt;
    int64_t bytes = file.st_size;
    // SQLite in WAL mode keeps committed pages in the -wal file until a checkpoint; a trace whose process died
    // has them there, so the main file alone would understate it.
    struct stat wal { };
    if (stat((path + "-wal").c_str(), &wal) == 0 && S_ISREG(wal.st_mode))
        bytes += wal.st_size;
    return bytes;
}

int64_t rows(size_t count)
{
    return static_cast<int64_t>(count);
}

// One column of the table: its heading and, per row, the cell text; numbers are right-aligned.
struct Column {
    std::string_view heading;
    bool right_aligned;
};

constexpr Column kColumns[] = {
    { "kernels", true },
    { "syncs", true },
    { "memcpys", true },
    { "dropped", true },
    { "tensor samples", true },
    { "bubble ratio", false },
    { "status", false },
    { "size", false },
};
constexpr size_t kColumnCount = std::size(kColumns);

std::array<std::string, kColumnCount> cells(const TraceFileSummary& trace)
{
    const TraceCounts& counts = *trace.counts;
    return {
        fmt::format("{}", counts.kernels),
        fmt::format("{}", counts.syncs),
        fmt::format("{}", counts.memcpys),
        fmt::format("{}", counts.dropped_records),
        counts.tensor_samples_skipped > 0
            ? fmt::format("{} (+{} skipped by cap)", counts.tensor_samples, counts.tensor_samples_skipped)
            : fmt::format("{}", counts.tensor_samples),
        counts.bubbles,
        counts.finished ? "finished" : "unfinished",
        trace.file_bytes ? format_bytes(*trace.file_bytes) : "unknown",
    };
}

// Each device's bubble ratio and top cause over the trace's steps (defaults of `fp8scope report`).
std::string bubble_summary(const analyzer::TraceModel& model)
{
    const analyzer::Report report = analyzer::analyze(model);
    std::string out;
    for (const analyzer::DeviceBubbles& device : report.bubbles.per_device) {
        const analyzer::BubbleTotals& t = device.totals;
        size_t top = 0;
        for (size_t c = 1; c < t.cause_ns.size(); ++c)
            if (t.cause_ns[c] > t.cause_ns[top])
                top = c;
        if (!out.empty())
            out += ", ";
        if (report.bubbles.per_device.size() > 1)
            out += fmt::format("d{} ", device.device_id);
        out += fmt::format("{:.3f}", t.bubble_ratio);
        if (t.idle_ns > 0)
            out += fmt::format(" {}", analyzer::bubble_cause_name(static_cast<analyzer::BubbleCause>(top)));
    }
    return out.empty() ? "-" : out;
}

} // namespace

namespace {

// Calls `each(line)` for every line of the manifest, the last one with or without its '\n'.
template <class Each> void for_each_line(std::string_view text, Each&& each)
{
    while (!text.empty()) {
        const size_t end = std::min(text.find('\n'), text.size());
        each(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
}

} // namespace

std::vector<std::string> parse_manifest(std::string_view text)
{
    std::vector<std::string> paths;
    for_each_line(text, [&](std::string_view line) {
        if (line.empty() || line.front() == '!')
            return;
        if (line.front() == '-') {
            std::erase(paths, line.substr(1));
            return;
        }
        if (std::ranges::find(paths, line) == paths.end())
            paths.emplace_back(line);
    });
    return paths;
}

std::vector<std::string> removed_traces(std::string_view text)
{
    std::vector<std::string> removed;
    for_each_line(text, [&](std::string_view line) {
        if (line.size() > 1 && line.front() == '-')
            removed.emplace_back(line.substr(1));
    });
    return removed;
}

std::string no_gpu_work_warning(size_t removed)
{
    if (removed == 1)
        return "fp8scope: warning: no trace was written: the one process that initialized CUDA did no GPU work and "
               "removed its empty trace (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it)\n";
    return fmt::format("fp8scope: warning: no trace was written: the {} processes that initialized CUDA did no GPU "
                       "work and removed their empty traces (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps them)\n",
        removed);
}

size_t count_untraced_processes(std::string_view text)
{
    size_t count = 0;
    for (size_t at = 0; at < text.size();) {
        if (text[at] == '!')
            ++count;
        const size_t end = text.find('\n', at);
        at = end == std::string_view::npos ? text.size() : end + 1;
    }
    return count;
}

TraceFileSummary summarize_trace(const std::string& path)
{
    TraceFileSummary summary { .path = path, .file_bytes = size_on_disk_bytes(path), .counts = {}, .error = {} };
    try {
        const auto model = analyzer::load_trace(path);
        if (!model) {
            summary.error = model.error().message;
            return summary;
        }
        summary.counts = TraceCounts {
            .kernels = rows(model->kernels.size()),
            .syncs = rows(model->syncs.size()),
            .memcpys = rows(model->memcpys.size()),
            .dropped_records = model->dropped_records(),
            .tensor_samples = rows(model->tensor_stats.size()),
            .tensor_samples_skipped = model->meta.tensor_stats_skipped,
            .finished = model->meta.finished,
            .bubbles = bubble_summary(*model),
            .capture_never_opened = capture_never_opened(*model),
            .inductor_kernels = analyzer::inductor_kernel_count(*model),
        };
    } catch (const std::exception& e) {
        // std::bad_alloc on a huge trace: the summary says so, and record still exits with the command's code.
        summary.error = fmt::format("cannot load trace '{}': {}", path, e.what());
    }
    return summary;
}

namespace {

// After the table: the processes that left no trace, then each trace whose capture window never opened.
std::string render_notes(const std::vector<TraceFileSummary>& traces, size_t removed)
{
    std::string out;
    if (removed > 0)
        out += fmt::format("fp8scope: {} more process{} initialized CUDA but did no GPU work (a compile worker, a "
                           "launcher): {} empty trace{} {} removed (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps {})\n",
            removed, removed == 1 ? "" : "es", removed == 1 ? "its" : "their", removed == 1 ? "" : "s",
            removed == 1 ? "was" : "were", removed == 1 ? "it" : "them");
    for (const TraceFileSummary& trace : traces)
        if (trace.counts && trace.counts->capture_never_opened)
            out += fmt::format(
                "fp8scope: warning: {}: {}\n", printable(trace.path), printable(*trace.counts->capture_never_opened));
    int64_t inductor = 0;
    for (const TraceFileSummary& trace : traces)
        inductor += trace.counts ? trace.counts->inductor_kernels : 0;
    if (inductor > 0)
        out += fmt::format(
            "fp8scope: note: {} kernels came from torch.compile (Inductor): two runs of a compiled job, "
            "recorded or not, may differ in the last bits of their losses (Inductor picks launch configs "
            "by timing them, and some kernels are not deterministic). Under "
            "torch.use_deterministic_algorithms(True), recorded losses are bitwise the untraced ones\n",
            inductor);
    return out;
}

} // namespace

std::string render_record_summary(const std::vector<TraceFileSummary>& traces, size_t removed)
{
    std::string out = fmt::format("fp8scope: {} trace{} written\n", traces.size(), traces.size() == 1 ? "" : "s");
    if (traces.empty())
        return out + render_notes(traces, removed);

    std::vector<std::string> paths;
    std::vector<std::array<std::string, kColumnCount>> table;
    size_t path_width = std::string_view("trace").size();
    std::array<size_t, kColumnCount> widths {};
    for (size_t c = 0; c < kColumnCount; ++c)
        widths[c] = kColumns[c].heading.size();
    for (const auto& trace : traces) {
        paths.push_back(printable(trace.path));
        path_width = std::max(path_width, paths.back().size());
        if (!trace.counts)
            continue;
        table.push_back(cells(trace));
        for (size_t c = 0; c < kColumnCount; ++c)
            widths[c] = std::max(widths[c], table.back()[c].size());
    }

    auto row = [&](const std::string& path, const std::array<std::string_view, kColumnCount>& values) {
        std::string line = fmt::format("  {:<{}}", path, path_width);
        for (size_t c = 0; c < kColumnCount; ++c) {
            if (kColumns[c].right_aligned)
                line += fmt::format("  {:>{}}", values[c], widths[c]);
            else if (c + 1 < kColumnCount)
                line += fmt::format("  {:<{}}", values[c], widths[c]);
            else
                line += fmt::format("  {}", values[c]); // no trailing blanks
        }
        return line + '\n';
    };

    std::array<std::string_view, kColumnCount> headings;
    for (size_t c = 0; c < kColumnCount; ++c)
        headings[c] = kColumns[c].heading;
    out += row("trace", headings);
    size_t next_row = 0;
    for (size_t t = 0; t < traces.size(); ++t) {
        if (!traces[t].counts) {
            // The loader's message names the file again; the path column keeps the table readable by eye.
            out += fmt::format("  {:<{}}  unreadable: {}\n", paths[t], path_width, printable(traces[t].error));
            continue;
        }
        const auto& values = table[next_row++];
        std::array<std::string_view, kColumnCount> views;
        std::ranges::copy(values, views.begin());
        out += row(paths[t], views);
    }
    return out + render_notes(traces, removed);
}

} // namespace fp8scope::cli
