// FP8SCOPE_META's keys (docs/trace-format.md, "FP8SCOPE_META"). Part of schema.hpp, which includes it; split off to
// keep each file readable.
#pragma once

#include <string>
#include <string_view>

// Integers are stored as INTEGER, everything else as TEXT.
namespace fp8scope::schema::meta {

inline constexpr std::string_view kSchemaVersion = "schema_version"; // "1.6"
inline constexpr std::string_view kProducer = "producer"; // "fp8scope 0.1.0 (collector)"
inline constexpr std::string_view kToolVersion = "tool_version";
inline constexpr std::string_view kCommandLine = "command_line";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kGlobalPid = "global_pid";
inline constexpr std::string_view kRank = "rank"; // -1 when the job has no rank
inline constexpr std::string_view kWorldSize = "world_size"; // -1 when unknown
inline constexpr std::string_view kCudaRuntimeVersion = "cuda_runtime_version"; // e.g. 13000
inline constexpr std::string_view kCudaDriverVersion = "cuda_driver_version";
inline constexpr std::string_view kCuptiVersion = "cupti_version";
inline constexpr std::string_view kSessionStartUtcNs = "session_start_utc_ns";
inline constexpr std::string_view kFinished = "finished"; // 0 while recording or after a crash, 1 when closed
inline constexpr std::string_view kFinishReason = "finish_reason"; // "exit", "SIGTERM", "cudaDeviceReset", ...
inline constexpr std::string_view kSessionEndNs = "session_end_ns"; // relative to session start
inline constexpr std::string_view kDroppedRecords = "dropped_records"; // total, written when finished
// Tensor statistics samples not taken because FP8SCOPE_STATS_CAP was reached in their step (or period, or
// second); not lost records. 0 at creation, updated while recording.
inline constexpr std::string_view kTensorStatsSkipped = "tensor_stats_skipped";
// What the recording was asked to capture (1.2): "full" (the whole run), "steps", "periodic", "cudaProfilerApi"
// or "time"; absent from older traces, which captured the whole run. capture_options: the options as given
// ("--capture-steps 20:29"), empty for "full".
inline constexpr std::string_view kCaptureMode = "capture_mode";
inline constexpr std::string_view kCaptureOptions = "capture_options";
// How CUPTI timed the kernels: "hardware" (the Hardware Event System, HES: Blackwell; no latency timestamps, and
// records of graphs launched from the device carry no correlation id) or "software" (instrumentation, as on Hopper),
// then ": " and why when the hardware path was asked for and not taken. Written at the start by collectors since
// issue 47; absent from older traces (software) and the scenario builder's. No version bump, as nvtx_step_ranges.
inline constexpr std::string_view kKernelTimestamps = "kernel_timestamps";
// NVTX step ranges (ProfilerStep#N, step, train_step, iteration) the collector saw pushed in a windowed recording,
// inside and outside its windows, where CUPTI records none: written at the first and when the trace is finished
// (so 1 in an unfinished trace means "at least 1"). Absent from whole-run traces and older ones. No version bump:
// it adds no table or column, and readers that do not know it ignore it.
inline constexpr std::string_view kNvtxStepRanges = "nvtx_step_ranges";
// The job's activity from its first start to its last end, relative to session start, as the analyzer counts it
// (TraceModel::time_span_ns): kernels, API calls, syncs, copies, memsets and NVTX events (a mark or an unclosed range
// by its start), without the collector's own work (the correlation ids of FP8SCOPE_COLLECTOR_WORK, and kernels named
// in kCollectorKernelNamespace). Written when the trace is finished and has activity, so that `fp8scope info` need
// not read the rows; absent from older and unfinished traces. No version bump, as nvtx_step_ranges.
inline constexpr std::string_view kActivityFirstNs = "activity_first_ns";
inline constexpr std::string_view kActivityLastNs = "activity_last_ns";
// A monitoring recording with a size bound (`record --max-size`): the bound in bytes, and how many of the oldest
// capture windows were deleted to keep the trace's pages in use under it (TraceDb::drop_oldest_windows). Both
// absent from recordings without a bound. No version bump, as nvtx_step_ranges.
inline constexpr std::string_view kTraceMaxBytes = "trace_max_bytes";
inline constexpr std::string_view kCaptureWindowsDropped = "capture_windows_dropped";
// The namespace of the collector's statistics kernels (probes/src/tensor_stats_kernel.cu, hp_stats_kernel.cu): traces
// written before FP8SCOPE_COLLECTOR_WORK tell the collector's kernels by it alone.
inline constexpr std::string_view kCollectorKernelNamespace = "fp8scope::probes";
// "row_count.<TABLE>": the rows of every table of kTables (views and FP8SCOPE_META aside), counted when the
// trace is finished (1.2). A reader compares the rows it reads against them: a damaged b-tree that reads as
// fewer rows without an error is found without a full integrity check.
inline constexpr std::string_view kRowCountPrefix = "row_count.";
inline std::string row_count_key(std::string_view table)
{
    return std::string(kRowCountPrefix) + std::string(table);
}

} // namespace fp8scope::schema::meta
