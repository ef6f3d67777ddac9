#include "export/trace_event_tracks.hpp"

namespace fp8scope::cli {

void ChromeTraceTracks::name_process(int64_t pid, std::string name, int64_t sort_index, std::string labels)
{
    if (!processes_named_.insert(pid).second)
        return;
    events_.metadata("process_name", pid, 0, "name", name);
    if (!labels.empty())
        events_.metadata("process_labels", pid, 0, "labels", labels);
    events_.metadata("process_sort_index", pid, 0, "sort_index", sort_index);
}

void ChromeTraceTracks::name_track(int64_t pid, int64_t tid, std::string name, int64_t sort_index)
{
    Track& t = track(pid, tid);
    t.name = std::move(name);
    t.sort_index = sort_index;
}

ChromeTraceTracks::Track& ChromeTraceTracks::track(int64_t pid, int64_t tid)
{
    const std::pair<int64_t, int64_t> key { pid, tid };
    if (last_track_ != nullptr && key == last_key_)
        return *last_track_;
    Track& t = tracks_[key]; // std::map: references stay valid as tracks are added
    if (t.lanes.empty())
        t.lanes.push_back(Lane { tid, {} });
    last_key_ = key;
    last_track_ = &t;
    return t;
}

void ChromeTraceTracks::write_name(int64_t pid, int64_t tid, Track& t)
{
    t.named = true;
    events_.metadata("thread_name", pid, tid, "name", t.name.empty() ? fmt::format("thread {}", tid) : t.name);
    events_.metadata("thread_sort_index", pid, tid, "sort_index", t.sort_index);
}

void ChromeTraceTracks::use(int64_t pid, int64_t tid)
{
    Track& t = track(pid, tid);
    if (!t.named)
        write_name(pid, tid, t);
}

int64_t ChromeTraceTracks::place(int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns)
{
    Track& t = track(pid, tid);
    if (!t.named)
        write_name(pid, tid, t);
    for (Lane& lane : t.lanes) {
        // Slices that ended by this start are closed for good: later slices start no earlier.
        while (!lane.open.empty() && lane.open.back().end_ns <= start_ns)
            lane.open.pop_back();
        if (lane.open.empty() || end_ns <= lane.open.back().end_ns) {
            lane.open.push_back({ start_ns, end_ns });
            return lane.tid;
        }
    }
    const int64_t lane_tid = synthetic_tid();
    const size_t lane_number = t.lanes.size();
    events_.metadata("thread_name", pid, lane_tid, "name",
        fmt::format("{} (overlap {})", t.name.empty() ? fmt::format("thread {}", tid) : t.name, lane_number));
    events_.metadata("thread_sort_index", pid, lane_tid, "sort_index", t.sort_index);
    t.lanes.push_back(Lane { lane_tid, { { start_ns, end_ns } } });
    ++overflow_lanes_;
    return lane_tid;
}

} // namespace fp8scope::cli
