// What a trace holds, without its activity rows: the meta, the GPUs, the capture windows, the rows per table, the
// dropped records and the activity's time span (what `fp8scope info` shows). A finished trace that records its row
// counts and its activity span (FP8SCOPE_META row_count.*, activity_first_ns and activity_last_ns) is summarized from
// those and a few small tables, in milliseconds at any size; any other file (older or unfinished traces, Nsight
// exports) is loaded whole and summarized from the model, as before.
#pragma once

#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/common/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8scope::analyzer {

struct TraceSummary {
    std::string path;
    TraceMeta meta;
    std::vector<GpuInfo> gpus;
    CaptureInfo capture;
    std::map<std::string, int64_t> row_counts; // as TraceModel::row_counts
    int64_t dropped_records = 0; // as TraceModel::dropped_records()
    std::optional<std::pair<int64_t, int64_t>> time_span_ns; // as TraceModel::time_span_ns()
    std::optional<std::pair<int64_t, int64_t>> marked_steps; // lowest and highest step of FP8SCOPE_STEP_MARKER
    // false: summarized from the meta and the small tables (the rows were not read, nor checked); true: from a full
    // load, which checked every row.
    bool rows_read = false;

    friend bool operator==(const TraceSummary&, const TraceSummary&) = default;
};

// The summary of a loaded model (rows_read true).
TraceSummary summarize(const TraceModel& model);

// The summary of the trace at `path`: from its meta when it records what is needed, else from a full load_trace()
// (reporting to `progress` then). Errors as load_trace(), for what is read: the file, its version, its tables and
// columns, the meta, the GPU, step marker, dropped-record and capture window rows, and a file shorter than its SQLite
// header says (truncated). Damage inside rows that are not read is found by load_trace() (`fp8scope report`, or
// `fp8scope info --read-rows`).
Expected<TraceSummary> load_trace_summary(const std::string& path, const ProgressHook& progress = {});

} // namespace fp8scope::analyzer
