#include "trace_info/info_render.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "trace_info/capture_notice.hpp"
#include "trace_info/capture_render.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

namespace {

using analyzer::TraceSource;
using analyzer::TraceSummary;
using Json = nlohmann::ordered_json;

constexpr int kLabelWidth = 16;
// Samples skipped by FP8SCOPE_STATS_CAP are no lost records: shown on their own line, never in the dropped total.
constexpr std::string_view kSkippedLabel = "tensor samples skipped by cap";

std::string source_name(TraceSource source)
{
    return source == TraceSource::Nsight ? "nsight" : "fp8scope";
}

std::string or_unknown(const std::string& text)
{
    return text.empty() ? "unknown" : printable(text);
}

// CUDA encodes runtime and driver versions as 1000 * major + 10 * minor (cudaRuntimeGetVersion docs).
std::string cuda_version(int32_t version)
{
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

// CUPTI's API version (cupti_version.h): from CUDA 13 on xxyyzz, the toolkit's major and minor and CUPTI's own
// update ("13.0.1" for 130001); before, a plain counter (18 for CUDA 11.8, 28 for 12.9 Update 1), kept as it is.
std::string cupti_version_text(int32_t version)
{
    if (version >= 10'000)
        return fmt::format("{}.{}.{} ({})", version / 10'000, (version / 100) % 100, version % 100, version);
    return fmt::format("{} (API version before CUDA 13)", version);
}

std::string rank_text(const analyzer::TraceMeta& meta)
{
    // fp8scope writes -1 for a job without a rank; an Nsight export does not record ranks at all.
    if (meta.rank < 0)
        return meta.source == TraceSource::Nsight ? "unknown" : "none";
    if (meta.world_size < 0)
        return fmt::format("{} (world size unknown)", meta.rank);
    return fmt::format("{} of {}", meta.rank, meta.world_size);
}

class TextWriter {
public:
    explicit TextWriter(TextStyle style)
        : style_(style)
    {
    }
    void heading(std::string_view title)
    {
        if (!out_.empty())
            out_ += '\n';
        if (style_.bold_headings)
            out_ += fmt::format("\x1b[1m{}\x1b[0m\n", title);
        else
            out_ += fmt::format("{}\n", title);
    }
    void field(std::string_view label, std::string_view value)
    {
        out_ += fmt::format("  {:<{}}{}\n", label, kLabelWidth, value);
    }
    void line(std::string_view text) { out_ += fmt::format("  {}\n", text); }
    std::string take() { return std::move(out_); }

private:
    TextStyle style_;
    std::string out_;
};

void write_gpus(TextWriter& text, const TraceSummary& model)
{
    text.heading("GPUs");
    if (model.gpus.empty()) {
        text.line("none recorded");
        return;
    }
    size_t name_width = 0;
    for (const auto& gpu : model.gpus)
        name_width = std::max(name_width, printable(gpu.name).size());
    for (const auto& gpu : model.gpus) {
        text.line(fmt::format("[{}] {:<{}}  {} SMs  {}  compute {}.{}", gpu.id, printable(gpu.name), name_width,
            gpu.sm_count, format_bytes(gpu.total_memory_bytes), gpu.compute_major, gpu.compute_minor));
    }
}

void write_rows(TextWriter& text, const TraceSummary& model)
{
    text.heading("Rows");
    size_t name_width = std::max(std::string_view("dropped records").size(), kSkippedLabel.size());
    size_t count_width = 1;
    for (const auto& [table, rows] : model.row_counts) {
        name_width = std::max(name_width, table.size());
        count_width = std::max(count_width, fmt::formatted_size("{}", rows));
    }
    for (const auto& [table, rows] : model.row_counts)
        text.line(fmt::format("{:<{}}  {:>{}}", printable(table), name_width, rows, count_width));
    text.line(fmt::format("{:<{}}  {:>{}}", "dropped records", name_width, model.dropped_records, count_width));
    if (model.meta.source == TraceSource::Fp8scope)
        text.line(
            fmt::format("{:<{}}  {:>{}}", kSkippedLabel, name_width, model.meta.tensor_stats_skipped, count_width));
}

Json id_or_null(int64_t value)
{
    return value < 0 ? Json(nullptr) : Json(value);
}
Json version_or_null(int32_t value)
{
    return value == 0 ? Json(nullptr) : Json(value);
}
Json text_or_null(const std::string& value)
{
    return value.empty() ? Json(nullptr) : Json(value);
}

} // namespace

std::string render_info_text(const TraceSummary& model, TextStyle style)
{
    const auto& meta = model.meta;
    TextWriter text(style);

    text.heading("Trace");
    text.field("path", printable(model.path));
    if (meta.source == TraceSource::Nsight)
        text.field(
            "format", fmt::format("Nsight Systems SQLite export, schema {}.{}", meta.schema_major, meta.schema_minor));
    else
        text.field("format", fmt::format("fp8scope trace, schema {}.{}", meta.schema_major, meta.schema_minor));
    text.field("producer", or_unknown(meta.producer));
    text.field("status", finish_status_text(meta.finished, meta.finish_reason));
    text.field("captured", capture_sentence(model.capture));
    if (const auto why = capture_never_opened(model))
        text.field("warning", *why);

    text.heading("Process");
    text.field("command line", or_unknown(meta.command_line));
    text.field("host", or_unknown(meta.host));
    text.field("pid", meta.pid < 0 ? "unknown" : fmt::format("{}", meta.pid));
    text.field("rank", rank_text(meta));
    if (meta.cuda_runtime_version > 0)
        text.field("CUDA runtime", cuda_version(meta.cuda_runtime_version));
    if (meta.cuda_driver_version > 0)
        text.field("CUDA driver", cuda_version(meta.cuda_driver_version));
    if (meta.cupti_version > 0)
        text.field("CUPTI API", cupti_version_text(meta.cupti_version));

    write_gpus(text, model);

    text.heading("Time");
    text.field("session start", format_utc_iso(meta.session_start_utc_ns).value_or("unknown"));
    if (const auto span = model.time_span_ns) {
        text.field("first activity", format_duration_ns(span->first) + " after session start");
        text.field("last activity", format_duration_ns(span->second) + " after session start");
        text.field("duration", format_duration_ns(span->second - span->first));
    } else {
        text.field("activity", "none recorded");
    }

    write_rows(text, model);
    return text.take();
}

Json render_info_json(const TraceSummary& model)
{
    const auto& meta = model.meta;
    Json gpus = Json::array();
    for (const auto& gpu : model.gpus) {
        gpus.push_back({
            { "id", gpu.id },
            { "name", gpu.name },
            { "chip_name", gpu.chip_name },
            { "uuid", gpu.uuid },
            { "bus_location", gpu.bus_location },
            { "sm_count", gpu.sm_count },
            { "total_memory_bytes", gpu.total_memory_bytes },
            { "memory_bandwidth_bytes_per_s", gpu.memory_bandwidth_bytes_per_s },
            { "clock_rate_hz", gpu.clock_rate_hz },
            { "compute_capability", { { "major", gpu.compute_major }, { "minor", gpu.compute_minor } } },
        });
    }
    Json time_span = nullptr;
    if (const auto span = model.time_span_ns)
        time_span = { { "first", span->first }, { "last", span->second }, { "duration", span->second - span->first } };
    Json row_counts = Json::object();
    for (const auto& [table, rows] : model.row_counts)
        row_counts[table] = rows;
    Json raw_meta = Json::object();
    for (const auto& [key, value] : meta.raw)
        raw_meta[key] = value;
    const auto start_iso = format_utc_iso(meta.session_start_utc_ns);
    Json warnings = Json::array();
    if (const auto why = capture_never_opened(model))
        warnings.push_back(*why);

    return Json {
        { "fp8scope_info_version", kInfoJsonVersion },
        { "path", model.path },
        { "source", source_name(meta.source) },
        { "schema", { { "major", meta.schema_major }, { "minor", meta.schema_minor } } },
        { "producer", meta.producer },
        { "finished", meta.finished },
        { "finish_reason", text_or_null(meta.finish_reason) },
        { "capture", capture_json(model.capture) },
        { "warnings", warnings },
        { "process",
            {
                { "command_line", text_or_null(meta.command_line) },
                { "host", text_or_null(meta.host) },
                { "pid", id_or_null(meta.pid) },
                { "rank", id_or_null(meta.rank) },
                { "world_size", id_or_null(meta.world_size) },
            } },
        { "cuda",
            {
                { "runtime_version", version_or_null(meta.cuda_runtime_version) },
                { "driver_version", version_or_null(meta.cuda_driver_version) },
                { "cupti_version", version_or_null(meta.cupti_version) },
            } },
        { "session_start",
            {
                { "utc_epoch_ns", meta.session_start_utc_ns },
                { "utc", start_iso ? Json(*start_iso) : Json(nullptr) },
            } },
        { "meta", raw_meta },
        { "gpus", gpus },
        { "time_span_ns", time_span },
        { "row_counts", row_counts },
        { "dropped_records", model.dropped_records },
        { "tensor_stats_skipped",
            model.meta.source == TraceSource::Fp8scope ? Json(model.meta.tensor_stats_skipped) : Json(nullptr) },
    };
}

} // namespace fp8scope::cli
