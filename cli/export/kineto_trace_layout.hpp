// Where `fp8scope export` puts things (kineto_trace.hpp): the pids and tids of GPUs, streams and host threads, their
// names, the window of time written, and the document's header. Also the tracks that show the analysis (steps,
// bubbles, the collector's own GPU work) and the counter tracks (scalars, tensor statistics).
#pragma once

#include "export/kineto_trace.hpp"
#include "export/trace_event_tracks.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace fp8scope::cli {

struct HostTrack {
    int64_t pid = 0, tid = 0;
};

class ExportLayout {
public:
    ExportLayout(
        const analyzer::TraceModel& model, const analyzer::Report& report, const PerfettoExportOptions& options);

    // The instant "ts": 0 stands for: the session start, or the earliest time written when that is earlier (a trace
    // may hold times before its session start; Kineto clamps negative times, since viewers refuse them).
    int64_t base_ns() const { return base_ns_; }
    void write_header(fmt::memory_buffer& out, std::string_view producer) const;

    bool in_window(int64_t start_ns, int64_t end_ns) const
    {
        if (!window_)
            return true;
        if (start_ns == end_ns)
            return start_ns >= window_->first && start_ns < window_->second;
        return start_ns < window_->second && end_ns > window_->first;
    }
    bool device_wanted(uint32_t device) const { return !device_ || *device_ == device; }
    bool windowed() const { return window_.has_value(); }

    // The host thread's track (pid from the globalTid, as nsys encodes it; the trace's pid when it holds none); names
    // its process and thread the first time.
    HostTrack host_track(ChromeTraceTracks& tracks, int64_t global_tid);
    int64_t host_pid(int64_t global_tid) const;
    void name_host_process(ChromeTraceTracks& tracks, int64_t pid) const;
    // The process of the job's main thread (the one that launched the most GPU work), for the steps track.
    int64_t main_host_pid() const { return main_host_pid_; }
    // The GPU's pid (its device id, as in Kineto, unless a host pid is the same number); names it the first time.
    int64_t gpu_process(ChromeTraceTracks& tracks, uint32_t device) const;
    // The stream's tid (its stream id); names the track "stream N" the first time.
    int64_t stream_track(ChromeTraceTracks& tracks, uint32_t device, uint32_t stream);

private:
    const analyzer::TraceModel& model_;
    const analyzer::Report& report_;
    std::optional<std::pair<int64_t, int64_t>> window_;
    std::optional<uint32_t> device_;
    int64_t base_ns_ = 0;
    int64_t gpu_pid_offset_ = 0;
    int64_t main_host_pid_ = 0;
    std::unordered_map<int64_t, std::string> thread_names_; // globalTid -> name
    std::unordered_set<int64_t> named_threads_;
    int64_t last_global_tid_ = 0;
    HostTrack last_host_ {};
    bool have_last_host_ = false;
    std::set<std::pair<uint32_t, uint32_t>> named_streams_;
};

// "Memcpy HtoD (Pinned -> Device)" and "Memset (Device)", the names Kineto gives copies and memsets.
std::string gpu_work_name(const analyzer::MemcpyTable& copies, size_t row);
std::string gpu_work_name(const analyzer::MemsetTable& sets, size_t row);

// The analysed steps as ProfilerStep#N slices (torch.profiler's name, which HTA finds iterations by) on a "steps"
// track of the main host process; per GPU a "bubbles" track with each bubble named by its cause; per GPU the
// collector's own work ("fp8scope statistics"), which no figure counts.
void write_analysis_tracks(ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events,
    const analyzer::TraceModel& model, const analyzer::Report& report);

// Scalars (loss, ...) on their host process, and tensor statistics per site on the sample's GPU, as counter tracks.
void write_counters(ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events,
    const analyzer::TraceModel& model, PerfettoExportCounts& counts);

} // namespace fp8scope::cli
