// summarize() of a loaded model, and the summary a finished trace's meta gives without its rows (trace_loader.cpp
// decides which one load_trace_summary() returns).
#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/format/schema.hpp"
#include "load/readers.hpp"

#include <algorithm>
#include <charconv>

namespace fp8scope::analyzer {

namespace {

std::optional<std::pair<int64_t, int64_t>> marked_steps(const std::vector<StepMarker>& markers)
{
    if (markers.empty())
        return std::nullopt;
    const auto [low, high] = std::ranges::minmax_element(markers, {}, &StepMarker::step);
    return std::pair(low->step, high->step);
}

std::optional<int64_t> meta_integer(const TraceMeta& meta, std::string_view key)
{
    const auto found = meta.raw.find(std::string(key));
    if (found == meta.raw.end())
        return std::nullopt;
    const std::string& text = found->second;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace

TraceSummary summarize(const TraceModel& model)
{
    return TraceSummary { .path = model.path,
        .meta = model.meta,
        .gpus = model.gpus,
        .capture = model.capture,
        .row_counts = model.row_counts,
        .dropped_records = model.dropped_records(),
        .time_span_ns = model.time_span_ns(),
        .marked_steps = marked_steps(model.step_markers),
        .rows_read = true };
}

namespace detail {

// `partial`: read_fp8scope_summary()'s model. nullopt when the meta lacks the activity span (an older trace, or one
// without activity) or holds one a loaded trace could not have.
std::optional<TraceSummary> summary_from_meta(const TraceModel& partial, const RowCounts& recorded)
{
    const auto first = meta_integer(partial.meta, schema::meta::kActivityFirstNs);
    const auto last = meta_integer(partial.meta, schema::meta::kActivityLastNs);
    if (!partial.meta.finished || !first || !last || *last < *first || *first < -kMaxTraceTimeNs
        || *last > kMaxTraceTimeNs)
        return std::nullopt;
    TraceSummary summary = summarize(partial);
    summary.time_span_ns = std::pair(*first, *last);
    summary.rows_read = false;
    // The rows of every table the full load reads, as counted when the trace was finished (and, for the tables read
    // here, as read). The session start table is the one a full load of our traces does not read.
    for (const auto& [table, rows] : recorded)
        if (table != schema::table::kSessionStart)
            summary.row_counts.try_emplace(table, rows);
    return summary;
}

} // namespace detail

} // namespace fp8scope::analyzer
