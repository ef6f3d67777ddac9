// TraceDb: the SQLite side of the writer. It owns one connection and must be used from one thread only; in
// the collector that is BackgroundWriter's thread, in tests and the scenario builder it is the caller's.
//
// It creates every table of schema.hpp up front, inserts through prepared statements inside a long
// transaction, commits when commit_if_due() finds the transaction older than the commit interval, interns
// strings, and on finish() writes the closing meta, builds the indexes and turns the file into one self-contained
// file (WAL checkpointed and switched off). A trace whose process died before finish() keeps meta finished=0.
#pragma once

#include "fp8scope/common/error.hpp"
#include "fp8scope/format/rows.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace fp8scope {

struct TraceDbOptions {
    // At least one commit per interval while rows keep coming (docs/collector.md "Hot path": at least once a second).
    std::chrono::milliseconds commit_interval { 500 };
    // Called once, on the writer's thread, at the first SQLite error that loses rows (a failed insert or commit:
    // disk full, I/O error). The collector prints its one warning line from it. Must not throw.
    std::function<void(const Error&)> on_write_error {};
};

// What the writer has done so far. Read by the collector's end-of-run summary and by the crash test.
struct WriterCounters {
    int64_t rows_written = 0; // inserted, committed or not
    int64_t rows_committed = 0; // durable in the file (survive SIGKILL)
    int64_t kernels_committed = 0;
    int64_t syncs_committed = 0;
    int64_t commits = 0;
    int64_t dropped_records = 0; // sum of DroppedRow counts
    // Rows an SQLite error lost (a failed insert, or a commit that was rolled back). finish() records them in
    // FP8SCOPE_DROPPED as WRITER_ERROR, so they are part of dropped_records.
    int64_t rows_lost = 0;
};

struct FinishInfo {
    std::string reason = "exit"; // stored as meta finish_reason
    int64_t session_end_ns = 0;
};

class TraceDb {
public:
    // Creates a new trace at `path`. Never follows a symlink and never replaces an existing file: another
    // process's trace is not clobbered (ErrorCode::Io with a message naming the path).
    static Expected<std::unique_ptr<TraceDb>> create(
        const std::string& path, const SessionInfo& session, const TraceDbOptions& options = {});
    ~TraceDb(); // closes without finishing if finish() was not called: the trace stays marked unfinished
    TraceDb(const TraceDb&) = delete;
    TraceDb& operator=(const TraceDb&) = delete;

    StringId intern(std::string_view text);

    // Each add_* inserts one row. They fail only on an SQLite error (disk full, I/O), which the caller turns
    // into a warning and a dropped-records count; after an error the TraceDb stays usable for finish().
    Expected<void> add_kernel(const KernelRow& row);
    Expected<void> add_api(const ApiRow& row);
    Expected<void> add_sync(const SyncRow& row);
    Expected<void> add_memcpy(const MemcpyRow& row);
    Expected<void> add_memset(const MemsetRow& row);
    Expected<void> add_nvtx(const NvtxRow& row);
    Expected<void> add_thread_name(const ThreadNameRow& row);
    Expected<void> add_gpu(const GpuInfoRow& row);
    Expected<void> add_tensor_site(const TensorSiteRow& row);
    Expected<void> add_tensor_stats(const TensorStatsRow& row);
    // A per-block statistics sample (FP8SCOPE_BLOCK_STATS, 1.6), written beside its FP8SCOPE_TENSOR_STATS row.
    Expected<void> add_block_stats(const BlockStatsRow& row);
    Expected<void> add_scalar(const ScalarRow& row);
    Expected<void> add_step_marker(const StepMarkerRow& row);
    Expected<void> add_overhead(const OverheadRow& row);
    Expected<void> add_dropped(const DroppedRow& row);
    // A correlation id of the collector's own CUDA calls (FP8SCOPE_COLLECTOR_WORK).
    Expected<void> add_collector_work(uint32_t correlation_id);
    // A capture window, as it opens or closes: a row with the same id replaces the earlier one.
    Expected<void> set_capture_window(const CaptureWindowRow& row);
    // Meta tensor_stats_skipped: statistics samples skipped by the cap so far (a total, not an increment).
    Expected<void> set_tensor_stats_skipped(int64_t total);
    // Meta nvtx_step_ranges: NVTX step ranges seen so far in a windowed recording (a total).
    Expected<void> set_nvtx_step_ranges(int64_t total);
    // A bounded recording (`record --max-size`, docs/collector.md "Monitoring"). At each capture window's start,
    // mark_window_start() notes the row every activity table has reached; drop_oldest_windows() then deletes the
    // rows before the second-oldest mark (the oldest window and whatever preceded it) and that window's
    // FP8SCOPE_CAPTURE_WINDOW row, as long as the file's pages in use exceed `max_bytes` and a window older than the
    // newest mark is left. SQLite reuses the freed pages, so the file stays near the bound. GPUs, strings, kernel
    // configurations, tensor sites, thread names, the collector's own work and dropped-record counts are kept. Meta
    // trace_max_bytes and capture_windows_dropped say so. Returns the windows dropped by this call.
    Expected<void> mark_window_start(int64_t window_id);
    Expected<int64_t> drop_oldest_windows(int64_t max_bytes);
    // The file's pages in use (page_count - freelist_count, times page_size), uncommitted rows included.
    Expected<int64_t> used_bytes();
    // Meta kernel_timestamps, once the collector has chosen how kernels are timed (after the trace was created).
    Expected<void> set_kernel_timestamps(std::string_view text);

    // Commits the open transaction if it is older than the commit interval. Cheap to call often.
    Expected<void> commit_if_due();
    Expected<void> commit();
    // Commits, writes finished=1 and the closing meta, creates the indexes, checkpoints the WAL and leaves a
    // single file. Idempotent.
    Expected<void> finish(const FinishInfo& info);

    const WriterCounters& counters() const;
    const std::string& path() const;

private:
    struct Impl;
    explicit TraceDb(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Kernel names: "void at::native::foo<float>(int, float*)" -> "foo". Used to fill shortName.
std::string demangle_kernel_name(std::string_view mangled);
std::string kernel_short_name(std::string_view demangled);

} // namespace fp8scope
