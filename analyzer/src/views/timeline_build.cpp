// build_timeline(): every activity of the model and every step, bubble and host-blocking call of the report laid out on
// tracks and non-overlapping lanes (timeline.hpp; docs/analysis.md "Queries for the viewer").
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "fp8scope/format/schema.hpp"
#include "model/progress_monitor.hpp"
#include "views/timeline_layout.hpp"
#include "views/timeline_links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

namespace fp8scope::analyzer {

using detail::Groups;
using detail::LanePacker;
using detail::ProgressMonitor;

namespace {

// (device, stream) as one key, ordered by device, then stream.
uint64_t stream_key(uint32_t device, uint32_t stream)
{
    return (uint64_t { device } << 32) | stream;
}
uint32_t device_of(uint64_t key)
{
    return static_cast<uint32_t>(key >> 32);
}
uint32_t stream_of(uint64_t key)
{
    return static_cast<uint32_t>(key);
}

// Items laid out so far against all items, reported every kTickItems items.
class BuildProgress {
public:
    BuildProgress(ProgressMonitor* monitor, size_t total_items)
        : monitor_(monitor)
        , total_(std::max<size_t>(1, total_items))
    {
    }
    // False once cancelled.
    bool tick()
    {
        if (++done_ % kTickItems != 0 || monitor_ == nullptr)
            return true;
        return monitor_->report(kLaidOutShare * static_cast<double>(done_) / static_cast<double>(total_));
    }
    bool finish() { return detail::report_progress(monitor_, 1.0); }

private:
    static constexpr size_t kTickItems = size_t { 1 } << 16;
    static constexpr double kLaidOutShare = 0.99; // the rest: block sums of the last lanes
    ProgressMonitor* monitor_;
    size_t total_;
    size_t done_ = 0;
};

// Sorts rows by start, and among equal starts the longest first, so that nesting maps to lanes (LanePacker). The
// tables are sorted by start already (stable), so this sorts only when equal starts come shortest first.
template <class StartOf, class EndOf> void order_for_packing(std::span<uint32_t> rows, StartOf start_of, EndOf end_of)
{
    const auto before = [&](uint32_t a, uint32_t b) {
        if (start_of(a) != start_of(b))
            return start_of(a) < start_of(b);
        if (end_of(a) != end_of(b))
            return end_of(a) > end_of(b);
        return a < b;
    };
    if (!std::ranges::is_sorted(rows, before))
        std::ranges::sort(rows, before);
}

uint8_t nvtx_category(int32_t event_type)
{
    if (event_type == static_cast<int32_t>(schema::NvtxEventType::Mark))
        return static_cast<uint8_t>(NvtxCategory::Mark);
    if (event_type == static_cast<int32_t>(schema::NvtxEventType::StartEndRange))
        return static_cast<uint8_t>(NvtxCategory::StartEnd);
    return static_cast<uint8_t>(NvtxCategory::PushPop);
}

class Builder {
public:
    Builder(const TraceModel& model, const Report& report, ProgressMonitor* monitor)
        : model_(model)
        , report_(report)
        , classes_(model)
        , progress_(monitor,
              model.kernels.size() + model.memcpys.size() + model.memsets.size() + model.api_calls.size()
                  + model.nvtx.size() + report.steps.steps.size() + report.bubbles.bubbles.size()
                  + report.blocking_calls.size())
        , links_(std::make_shared<detail::TimelineLinks>(model))
    {
    }

    // nullopt when cancelled.
    std::optional<TimelineIndex> build();

private:
    TimelineTrack& add_track(TrackKind kind, std::string name)
    {
        TimelineTrack& track = index_.tracks.emplace_back();
        track.kind = kind;
        track.name = std::move(name);
        return track;
    }
    uint32_t last_track() const { return static_cast<uint32_t>(index_.tracks.size() - 1); }
    std::string thread_label(int64_t global_tid) const;
    uint8_t api_category(size_t row) const;
    int64_t nvtx_end(size_t row) const;
    void link_syncs_to_bubbles();

    bool add_steps();
    bool add_bubbles(uint32_t device);
    bool add_stream(
        uint64_t key, std::span<uint32_t> kernels, std::span<uint32_t> memcpys, std::span<uint32_t> memsets);
    // A host thread's API calls, host-blocking calls and NVTX ranges (rows of model.api_calls, indices into
    // report.blocking_calls, rows of model.nvtx): one track each, when it has any.
    bool add_thread(int64_t tid, std::span<uint32_t> calls, std::span<uint32_t> syncs, std::span<uint32_t> nvtx);
    template <class StartOf, class EndOf, class CategoryOf>
    bool add_thread_track(TrackKind kind, std::string name, int64_t tid, std::span<uint32_t> rows, ItemKind item,
        StartOf start_of, EndOf end_of, CategoryOf category_of);

    const TraceModel& model_;
    const Report& report_;
    KernelClassCache classes_;
    BuildProgress progress_;
    std::shared_ptr<detail::TimelineLinks> links_;
    TimelineIndex index_;
    std::vector<uint8_t> blocking_rows_; // per API row: 1 for a host-blocking call
    std::unordered_map<int64_t, StringRef> thread_names_;
};

std::optional<TimelineIndex> Builder::build()
{
    if (const auto span = model_.time_span_ns()) {
        index_.start_ns = span->first;
        index_.end_ns = span->second;
    }
    blocking_rows_.assign(model_.api_calls.size(), 0);
    for (const HostBlockingCall& call : report_.blocking_calls)
        if (call.api_index < blocking_rows_.size())
            blocking_rows_[call.api_index] = 1;
    for (const ThreadName& t : model_.thread_names)
        thread_names_.emplace(t.global_tid, t.name);
    link_syncs_to_bubbles();

    if (!add_steps())
        return std::nullopt;
    Groups<uint64_t> kernels(model_.kernels.size(),
        [&](size_t r) { return stream_key(model_.kernels.device_id[r], model_.kernels.stream_id[r]); });
    Groups<uint64_t> memcpys(model_.memcpys.size(),
        [&](size_t r) { return stream_key(model_.memcpys.device_id[r], model_.memcpys.stream_id[r]); });
    Groups<uint64_t> memsets(model_.memsets.size(),
        [&](size_t r) { return stream_key(model_.memsets.device_id[r], model_.memsets.stream_id[r]); });
    std::map<uint32_t, std::vector<uint64_t>> streams_of_device;
    for (const auto* groups : { &kernels, &memcpys, &memsets })
        for (const auto& [key, g] : groups->index)
            streams_of_device[device_of(key)].push_back(key);
    for (const Bubble& b : report_.bubbles.bubbles)
        streams_of_device.try_emplace(b.device_id);
    for (auto& [device, keys] : streams_of_device) {
        if (!add_bubbles(device))
            return std::nullopt;
        std::ranges::sort(keys);
        const auto [first, last] = std::ranges::unique(keys);
        keys.erase(first, last);
        for (const uint64_t key : keys)
            if (!add_stream(key, kernels.of(key), memcpys.of(key), memsets.of(key)))
                return std::nullopt;
    }

    Groups<int64_t> calls(model_.api_calls.size(), [&](size_t r) { return model_.api_calls.global_tid[r]; });
    Groups<int64_t> syncs(
        report_.blocking_calls.size(), [&](size_t c) { return report_.blocking_calls[c].global_tid; });
    Groups<int64_t> nvtx(model_.nvtx.size(), [&](size_t r) { return model_.nvtx.global_tid[r]; });
    std::vector<int64_t> threads;
    for (const auto* groups : { &calls, &syncs, &nvtx })
        for (const auto& [tid, g] : groups->index)
            threads.push_back(tid);
    std::ranges::sort(threads);
    const auto [first, last] = std::ranges::unique(threads);
    threads.erase(first, last);
    for (const int64_t tid : threads)
        if (!add_thread(tid, calls.of(tid), syncs.of(tid), nvtx.of(tid)))
            return std::nullopt;

    index_.links = std::move(links_);
    if (!progress_.finish())
        return std::nullopt;
    return std::move(index_);
}

std::string Builder::thread_label(int64_t global_tid) const
{
    const int64_t tid = schema::tid_of(global_tid);
    const auto name = thread_names_.find(global_tid);
    if (name == thread_names_.end() || model_.strings[name->second].empty())
        return fmt::format("thread {}", tid);
    return fmt::format("thread {} ({})", tid, model_.strings[name->second]);
}

uint8_t Builder::api_category(size_t row) const
{
    if (blocking_rows_[row] != 0)
        return static_cast<uint8_t>(ApiCategory::Blocking);
    const uint32_t id = model_.api_calls.correlation_id[row];
    if (links_->kernels.contains(id) || links_->memcpys.contains(id) || links_->memsets.contains(id))
        return static_cast<uint8_t>(ApiCategory::Launch);
    return static_cast<uint8_t>(ApiCategory::Other);
}

// A mark is an instant; a range the file never closed stays open to the end of the trace.
int64_t Builder::nvtx_end(size_t row) const
{
    const int64_t end_ns = model_.nvtx.end_ns[row];
    if (end_ns != NvtxTable::kNoEnd)
        return end_ns;
    const int64_t start_ns = model_.nvtx.start_ns[row];
    if (model_.nvtx.event_type[row] == static_cast<int32_t>(schema::NvtxEventType::Mark))
        return start_ns;
    return std::max(start_ns, index_.end_ns);
}

void Builder::link_syncs_to_bubbles()
{
    const size_t calls = report_.blocking_calls.size();
    const auto& bubbles = report_.bubbles.bubbles;
    std::vector<uint32_t>& offsets = links_->sync_bubble_offsets;
    offsets.assign(calls + 1, 0);
    const auto charged
        = [&](const Bubble& b) { return b.cause == BubbleCause::Sync && b.sync_call && *b.sync_call < calls; };
    for (const Bubble& b : bubbles)
        if (charged(b))
            ++offsets[*b.sync_call + 1];
    for (size_t c = 0; c < calls; ++c)
        offsets[c + 1] += offsets[c];
    links_->sync_bubbles.resize(offsets.back());
    std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
    for (size_t i = 0; i < bubbles.size(); ++i)
        if (charged(bubbles[i]))
            links_->sync_bubbles[fill[*bubbles[i].sync_call]++] = static_cast<uint32_t>(i);
}

bool Builder::add_steps()
{
    const auto& steps = report_.steps.steps;
    if (steps.empty())
        return true;
    LanePacker packer(add_track(TrackKind::Steps, "steps"), steps.size());
    links_->steps_track = last_track();
    for (size_t i = 0; i < steps.size(); ++i) {
        packer.add(steps[i].start_ns, steps[i].end_ns, ItemKind::Step, static_cast<uint32_t>(i), 0);
        if (!progress_.tick())
            return false;
    }
    packer.finish();
    return true;
}

bool Builder::add_bubbles(uint32_t device)
{
    // Bubbles come by device, then time (bubbles.hpp).
    const auto& bubbles = report_.bubbles.bubbles;
    const auto [first, last] = std::ranges::equal_range(bubbles, device, {}, &Bubble::device_id);
    if (first == last)
        return true;
    TimelineTrack& track = add_track(TrackKind::Bubbles, fmt::format("GPU {} · bubbles", device));
    track.device_id = device;
    links_->bubble_tracks[device] = last_track();
    LanePacker packer(track, static_cast<size_t>(last - first));
    for (auto it = first; it != last; ++it) {
        packer.add(it->start_ns, it->end_ns, ItemKind::Bubble, static_cast<uint32_t>(it - bubbles.begin()),
            static_cast<uint8_t>(it->cause));
        if (!progress_.tick())
            return false;
    }
    packer.finish();
    return true;
}

bool Builder::add_stream(
    uint64_t key, std::span<uint32_t> kernels, std::span<uint32_t> memcpys, std::span<uint32_t> memsets)
{
    TimelineTrack& track
        = add_track(TrackKind::GpuStream, fmt::format("GPU {} · stream {}", device_of(key), stream_of(key)));
    track.device_id = device_of(key);
    track.stream_id = stream_of(key);
    links_->stream_tracks[{ device_of(key), stream_of(key) }] = last_track();
    LanePacker packer(track, kernels.size() + memcpys.size() + memsets.size());
    // Each list is in start order (its table is). Merged by (start, end): work on one stream runs one after another,
    // so of two items starting together the shorter (an instant) came first.
    size_t k = 0, c = 0, s = 0;
    using Key = std::pair<int64_t, int64_t>;
    const auto next = [](const auto& table, std::span<uint32_t> rows, size_t i) {
        constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
        return i < rows.size() ? Key { table.start_ns[rows[i]], table.end_ns[rows[i]] } : Key { kEnd, kEnd };
    };
    while (k < kernels.size() || c < memcpys.size() || s < memsets.size()) {
        const Key tk = next(model_.kernels, kernels, k);
        const Key tc = next(model_.memcpys, memcpys, c);
        const Key ts = next(model_.memsets, memsets, s);
        if (k < kernels.size() && tk <= tc && tk <= ts) {
            const uint32_t row = kernels[k++];
            packer.add(tk.first, tk.second, ItemKind::Kernel, row, static_cast<uint8_t>(classes_.of(row).cls));
        } else if (c < memcpys.size() && tc <= ts) {
            const uint32_t row = memcpys[c++];
            packer.add(tc.first, tc.second, ItemKind::Memcpy, row, kCategoryMemcpy);
        } else {
            const uint32_t row = memsets[s++];
            packer.add(ts.first, ts.second, ItemKind::Memset, row, kCategoryMemset);
        }
        if (!progress_.tick())
            return false;
    }
    packer.finish();
    return true;
}

template <class StartOf, class EndOf, class CategoryOf>
bool Builder::add_thread_track(TrackKind kind, std::string name, int64_t tid, std::span<uint32_t> rows, ItemKind item,
    StartOf start_of, EndOf end_of, CategoryOf category_of)
{
    if (rows.empty())
        return true;
    order_for_packing(rows, start_of, end_of);
    TimelineTrack& track = add_track(kind, std::move(name));
    track.global_tid = tid;
    auto& tracks = kind == TrackKind::HostThread ? links_->api_tracks
        : kind == TrackKind::Syncs               ? links_->sync_tracks
                                                 : links_->nvtx_tracks;
    tracks[tid] = last_track();
    LanePacker packer(track, rows.size());
    for (const uint32_t row : rows) {
        packer.add(start_of(row), end_of(row), item, row, category_of(row));
        if (!progress_.tick())
            return false;
    }
    packer.finish();
    return true;
}

bool Builder::add_thread(int64_t tid, std::span<uint32_t> calls, std::span<uint32_t> syncs, std::span<uint32_t> nvtx)
{
    const std::string label = thread_label(tid);
    const ApiTable& api = model_.api_calls;
    const auto& blocking = report_.blocking_calls;
    const NvtxTable& ranges = model_.nvtx;
    return add_thread_track(
               TrackKind::HostThread, label, tid, calls, ItemKind::ApiCall, [&](uint32_t r) { return api.start_ns[r]; },
               [&](uint32_t r) { return api.end_ns[r]; }, [&](uint32_t r) { return api_category(r); })
        && add_thread_track(
            TrackKind::Syncs, "syncs · " + label, tid, syncs, ItemKind::Sync,
            [&](uint32_t c) { return blocking[c].start_ns; }, [&](uint32_t c) { return blocking[c].end_ns; },
            [&](uint32_t c) { return static_cast<uint8_t>(blocking[c].kind); })
        && add_thread_track(
            TrackKind::Nvtx, "NVTX · " + label, tid, nvtx, ItemKind::Nvtx,
            [&](uint32_t r) { return ranges.start_ns[r]; }, [&](uint32_t r) { return nvtx_end(r); },
            [&](uint32_t r) { return nvtx_category(ranges.event_type[r]); });
}

} // namespace

TimelineIndex build_timeline(const TraceModel& model, const Report& report)
{
    return *Builder(model, report, nullptr).build();
}

Expected<TimelineIndex> build_timeline(const TraceModel& model, const Report& report, const ProgressHook& progress)
{
    if (!progress)
        return build_timeline(model, report);
    ProgressMonitor monitor(progress);
    auto index = Builder(model, report, &monitor).build();
    if (!index)
        return std::unexpected(ProgressMonitor::cancelled_error("timeline cancelled"));
    return std::move(*index);
}

} // namespace fp8scope::analyzer
