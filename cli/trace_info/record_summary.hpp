// The summary `fp8scope record` prints on stderr once the command has exited: one line per trace file that the
// collector listed in the manifest, with what the analyzer's loader finds in it. Reading is separate from
// formatting so that tests can render summaries of traces made by the scenario builder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli {

// What one trace holds, as far as the summary shows it.
struct TraceCounts {
    int64_t kernels = 0;
    int64_t syncs = 0;
    int64_t memcpys = 0;
    int64_t dropped_records = 0;
    int64_t tensor_samples = 0; // FP8SCOPE_TENSOR_STATS rows
    int64_t tensor_samples_skipped = 0; // meta tensor_stats_skipped: not taken because of the cap, not lost
    bool finished = false; // meta `finished` = 1: the recording process closed the trace
    // Per device, the bubble ratio (idle time / step time) and the top cause of idle time, as `report` computes
    // them: "0.676 host", or "d0 0.31 launch, d1 0.12 sync" with several devices; "-" with no GPU activity.
    std::string bubbles = "-";
    // A recording by steps whose window never opened, and why (capture_notice.hpp); unset otherwise.
    std::optional<std::string> capture_never_opened = std::nullopt;
    // Kernels torch.compile's Inductor generated (analyzer::inductor_kernel_count): their configs may be chosen by
    // timing, so the summary says that numbers can differ in the last bits between runs.
    int64_t inductor_kernels = 0;
};

struct TraceFileSummary {
    std::string path;
    // Bytes of the file plus its -wal file when one is left (an unfinished trace keeps its data there);
    // nullopt when the size cannot be read.
    std::optional<int64_t> file_bytes;
    std::optional<TraceCounts> counts; // set when the trace loaded
    std::string error; // the loader's one-line message when it did not
};

// The trace paths in a manifest, one per line as the collector appends them, in order of first appearance:
// duplicates and empty lines are dropped (a process that recreates its trace may list it twice).
// Lines starting with '!' are processes the collector could not trace ("!<pid>\t<reason>"); they are not paths.
// Lines starting with '-' name a trace that its process removed at its end because it did no GPU work
// ("-<path>", collector/src/calls/idle_trace.hpp): that path is left out, unless a later line lists it again (another
// process took the freed name).
std::vector<std::string> parse_manifest(std::string_view text);
// The paths of the '-' lines: one per process that did no GPU work and left no trace.
std::vector<std::string> removed_traces(std::string_view text);
// The number of '!' lines: processes that initialized CUDA but could not be traced, each of which has printed its
// own warning already.
size_t count_untraced_processes(std::string_view text);

// Loads the trace with the analyzer's load_trace and counts its rows. Never throws: a trace that cannot be
// loaded (or a loader that runs out of memory) gives a summary with `error` set.
TraceFileSummary summarize_trace(const std::string& path);

// "fp8scope: 2 traces written" and an aligned table, one row per file; an unreadable trace gets one line naming
// it and the error. Then one line for the `removed` processes that did no GPU work, if any, and one warning per
// trace whose capture window never opened, and one note when a trace holds torch.compile (Inductor) kernels. Every
// line ends with '\n'. Paths are shown printable (control
// characters as \xNN).
std::string render_record_summary(const std::vector<TraceFileSummary>& traces, size_t removed = 0);

// The warning `record` prints when the manifest is empty, as one line with its '\n'.
inline constexpr std::string_view kNoTraceWarning
    = "fp8scope: warning: no trace was written: the command never initialized CUDA\n";
// The warning `record` prints when every process that initialized CUDA did no GPU work, so that each removed its
// trace (`removed` of them, at least 1), as one line with its '\n'.
std::string no_gpu_work_warning(size_t removed);

} // namespace fp8scope::cli
