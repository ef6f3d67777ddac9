// Traces of processes that did no GPU work (docs/collector.md "Processes that do no GPU work"). torch.compile's compile
// workers, launchers and other helpers import a CUDA library and initialize CUDA (a device count, the device's
// properties) without ever running anything on the GPU. Each left an empty trace beside the job's, and, with a rank in
// its environment (a torchrun worker's compile workers inherit RANK), a second trace of that rank, which
// `fp8scope report DIR` refuses. The collector removes such a trace when its process ends through exit, _exit or a
// terminating signal. This file holds the rule and the removal, with no process-wide state, so that tests drive them
// without a GPU; the collector (collector.cpp) gathers the evidence.
#pragma once

#include "cupti/record_decoder.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::collector {

// What a process left, or showed, of GPU work by the time its trace is finished.
struct WorkEvidence {
    // CUPTI recorded the whole process (no capture windows) with its default activity kinds and API calls: the
    // rows alone then say whether it did GPU work. Under capture windows CUPTI is off, and mostly detached, between
    // windows, so a job whose windows never opened leaves no row either.
    bool whole_process_recorded = false;
    int64_t activity_rows = 0; // activity_rows(): kernels, API calls, syncs, copies, memsets, NVTX ranges
    bool job_wrote_rows = false; // step markers, scalars, probes or tensor statistics through the collector
    int64_t records_lost = 0; // dropped records of any source, rows the writer could not write
    // Windowed recordings: whether a CUDA context was seen active in the process at any look (the flusher looks at
    // each wake-up until it sees one, and once more at the end); nullopt when the driver never answered.
    std::optional<bool> context_seen = std::nullopt;
};

// The decoded rows that show GPU work: everything but DEVICE rows (one per GPU, whatever the process did) and
// CUPTI's OVERHEAD records (its own buffer flushes).
int64_t activity_rows(const DecoderCounters& decoded);

// True only when the evidence shows that the process did no GPU work: no row of any such kind, nothing lost, and,
// when CUPTI did not record the whole process, no CUDA context ever seen. Anything unknown keeps the trace.
bool did_no_gpu_work(const WorkEvidence& evidence);

// Removes the trace at `path` and the files SQLite may have left beside it (-wal, -shm, -journal). True when no
// file is left at `path`.
bool remove_trace_files(const std::string& path);

// The FP8SCOPE_MANIFEST line of a trace removed for lack of GPU work: "-<absolute path>\n". `record` leaves the path
// out of its summary and counts the process instead (cli/trace_info/record_summary.hpp).
std::string removed_trace_manifest_line(std::string_view absolute_path);

} // namespace fp8scope::collector
