// `fp8scope export --perfetto`: a trace and its analysis as Chrome-trace JSON in the layout Kineto writes, so that
// Perfetto UI, chrome://tracing and Holistic Trace Analysis (HTA) open it (docs/cli.md "export"). The analyzer has
// decided everything shown (steps, bubbles and their causes, launch calls, kernel classes, tensor figures); this
// only lays it out:
// - each GPU a process (pid = device id), each stream a thread (tid = stream id) with its kernels, copies and memsets;
// - each host process and thread with its CUDA API calls and NVTX ranges;
// - "ac2g" flow events from each launch call to its GPU work;
// - the analysed steps as ProfilerStep#N slices on a "steps" track of the host process;
// - per GPU a "bubbles" track: one slice per bubble, named by its cause;
// - scalars and tensor statistics as counter tracks.
// Events are written as the model's tables are walked, never held: memory beyond the model and report is a few bytes
// per correlation id.
#pragma once

#include "export/trace_event_writer.hpp"

#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace fp8scope::cli {

struct PerfettoExportOptions {
    // [start, end) in ns: only what overlaps it is written (`--steps`: the selected steps' span); nullopt: everything.
    std::optional<std::pair<int64_t, int64_t>> window_ns;
    std::optional<uint32_t> device; // `--device`: only this GPU's tracks and counters (host tracks stay whole)
    std::string producer; // "fp8scope 0.1.0", for the header
};

struct PerfettoExportCounts {
    int64_t events = 0; // every event written, metadata included
    int64_t slices = 0; // "X" events
    int64_t flows = 0; // launch -> GPU work pairs ("s" and "f")
    int64_t counter_values = 0;
    int64_t nonfinite_values = 0; // counter values left out: NaN or Inf (JSON has no such numbers)
    int64_t nan_scalars = 0; // scalar values that were NaN, written as instants "<name> = NaN" instead of counters
    int64_t overflow_lanes = 0; // tracks added for slices that did not nest (trace_event_tracks.hpp)
};

// Writes the whole document into `file` (which the caller then commits). `report` must be analyze(model, ...).
// nullopt when `progress` cancelled.
std::optional<PerfettoExportCounts> write_perfetto_trace(const analyzer::TraceModel& model,
    const analyzer::Report& report, const PerfettoExportOptions& options, ChromeTraceFile& file,
    const analyzer::ProgressHook& progress = {});

} // namespace fp8scope::cli
