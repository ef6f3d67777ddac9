// The tracks of an exported Chrome trace: (pid, tid) pairs, each named once with "M" metadata when first used, whose
// slices must nest. Perfetto drops a slice that partly overlaps another on its track
// (slice_drop_overlapping_complete_event) and Chrome draws it wrongly, so a slice that would not nest goes on an
// overflow lane, a thread of its own named after its track ("stream 7 (overlap 1)"). Kernels of one stream never
// overlap in the model (outside CUDA graphs), so overflow lanes are rare: graph branches, copies running beside
// kernels on one stream, start/end NVTX ranges.
#pragma once

#include "export/trace_event_writer.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fp8scope::cli {

// Tids made up for tracks that are no thread (steps, bubbles, overflow lanes): above every Linux tid and CUDA stream
// id (32 bits), and exact in a double (what a JSON reader holds numbers in).
inline constexpr int64_t kSyntheticTidBase = int64_t { 1 } << 32;

class ChromeTraceTracks {
public:
    explicit ChromeTraceTracks(ChromeTraceEvents& events)
        : events_(events)
    {
    }

    // Names a process (process_name, process_labels when given, process_sort_index) the first time it is used.
    void name_process(int64_t pid, std::string name, int64_t sort_index, std::string labels = {});
    // Names a track; its name is written when place() first puts a slice on it.
    void name_track(int64_t pid, int64_t tid, std::string name, int64_t sort_index);
    // A fresh synthetic tid (kSyntheticTidBase and up) for a track that is no thread.
    int64_t synthetic_tid() { return next_synthetic_tid_++; }

    // The tid to write the slice [start_ns, end_ns) under: the track's own, or an overflow lane's when the slice does
    // not nest there. Slices of one track must be placed in order of start and, for equal starts, longest first (the
    // order a viewer nests them in); then every lane holds properly nested slices.
    int64_t place(int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns);
    // Names the track (pid, tid) if that has not been done yet, for events that are no slices (instants).
    void use(int64_t pid, int64_t tid);

    int64_t overflow_lanes() const { return overflow_lanes_; }

private:
    struct Open {
        int64_t start_ns, end_ns;
    };
    struct Lane {
        int64_t tid = 0;
        std::vector<Open> open; // the slices still open on the lane, outermost first
    };
    struct Track {
        std::string name;
        int64_t sort_index = 0;
        bool named = false;
        std::vector<Lane> lanes;
    };
    Track& track(int64_t pid, int64_t tid);
    void write_name(int64_t pid, int64_t tid, Track& t);

    ChromeTraceEvents& events_;
    std::map<std::pair<int64_t, int64_t>, Track> tracks_;
    std::set<int64_t> processes_named_;
    std::pair<int64_t, int64_t> last_key_ { -1, -1 };
    Track* last_track_ = nullptr;
    int64_t next_synthetic_tid_ = kSyntheticTidBase;
    int64_t overflow_lanes_ = 0;
};

} // namespace fp8scope::cli
