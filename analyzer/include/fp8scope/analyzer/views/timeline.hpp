// The timeline's level-of-detail index (docs/gui.md "Timeline"; docs/analysis.md "Queries for the viewer"). Built once
// after a trace is loaded and analysed, it lays every activity out on tracks (per device and stream, per host thread,
// NVTX per thread, steps, bubbles per device, host-blocking calls per thread) and lanes (non-overlapping rows of a
// track). query() then answers "what to draw in [t0, t1) at this pixel width" with runs of items narrower than a few
// pixels folded into one entry, Tracy's way: the work per frame scales with pixels, never with the items in view.
// The GUI maps time to pixels and paints; it holds no analysis logic and never walks the model's rows per frame.
#pragma once

#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/common/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp8scope::analyzer {

namespace detail {
struct TimelineLinks;
}

enum class TrackKind : uint8_t {
    Steps, // Report::steps, one lane
    Bubbles, // one device's bubbles (Report::bubbles), one lane
    GpuStream, // one (device, stream): kernels, memcpys and memsets
    HostThread, // one host thread's CUDA API calls; a call inside another (a driver call made by a runtime call) is
                // on the next lane down
    Syncs, // one host thread's host-blocking calls (Report::blocking_calls), the markers of rule 1
    Nvtx, // one host thread's NVTX ranges and marks, one lane per nesting level
};

// Which table ItemRef::row indexes.
enum class ItemKind : uint8_t {
    Kernel, // TraceModel::kernels
    Memcpy, // TraceModel::memcpys
    Memset, // TraceModel::memsets
    ApiCall, // TraceModel::api_calls
    Nvtx, // TraceModel::nvtx
    Step, // Report::steps.steps
    Bubble, // Report::bubbles.bubbles
    Sync, // Report::blocking_calls
};

// One item of the timeline: a row of the model or of the report, for details and flows.
struct ItemRef {
    ItemKind kind = ItemKind::Kernel;
    uint32_t row = 0;
    friend bool operator==(ItemRef, ItemRef) = default;
};

// An item's category, its colour key; a fold carries the category with the most time. What it means depends on the
// track kind (timeline_category_name() gives the words):
// - GpuStream: the KernelClass of a kernel (0-5), kCategoryMemcpy, kCategoryMemset;
// - HostThread: ApiCategory;
// - Syncs: HostBlockingKind;
// - Bubbles: BubbleCause;
// - Nvtx: NvtxCategory;
// - Steps: 0.
inline constexpr size_t kTimelineCategoryCount = 8;
inline constexpr uint8_t kCategoryMemcpy = 6;
inline constexpr uint8_t kCategoryMemset = 7;
enum class ApiCategory : uint8_t {
    Launch, // the call launched GPU work (a kernel, memcpy or memset carries its correlation id)
    Blocking, // a host-blocking call (Report::blocking_calls)
    Other,
};
enum class NvtxCategory : uint8_t { PushPop, StartEnd, Mark };

// "FP8 GEMM", "memcpy", "launch", "stream sync", "sync" (a bubble's cause), "push/pop range", "step", ...
std::string_view timeline_category_name(TrackKind kind, uint8_t category);

// Items per block of TimelineLane::block_time_ns.
inline constexpr size_t kLaneBlockItems = 32;

// One row of a track: items sorted by start that do not overlap (an item may start where the previous one ends;
// zero-length items are allowed), so their ends are sorted too. Columns, one entry per item.
struct TimelineLane {
    std::string label; // "depth 0", "depth 1", ...; empty when the track has one lane
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> row; // ItemRef::row
    std::vector<ItemKind> kind; // ItemRef::kind
    std::vector<uint8_t> category;
    // block_time_ns[b][c]: the summed duration of the items [0, b * kLaneBlockItems) of category c, so that a fold's
    // time per category costs two block lookups and at most 2 * kLaneBlockItems items, whatever its length.
    std::vector<std::array<int64_t, kTimelineCategoryCount>> block_time_ns;

    size_t size() const { return start_ns.size(); }
    ItemRef ref(size_t item) const { return { kind[item], row[item] }; }
};

struct TimelineTrack {
    TrackKind kind = TrackKind::Steps;
    // "steps", "GPU 0 · bubbles", "GPU 0 · stream 7", "thread 1234 (python3)", "syncs · thread 1234 (python3)",
    // "NVTX · thread 1234 (python3)"
    std::string name;
    std::optional<uint32_t> device_id; // Bubbles, GpuStream
    std::optional<uint32_t> stream_id; // GpuStream
    std::optional<int64_t> global_tid; // HostThread, Syncs, Nvtx
    std::vector<TimelineLane> lanes; // at least one
    size_t items = 0; // over all lanes
};

// A lane of the index: TimelineIndex::tracks[track].lanes[lane].
struct LaneRef {
    uint32_t track = 0;
    uint32_t lane = 0;
    friend bool operator==(LaneRef, LaneRef) = default;
};

// Where an item is drawn: the lane and its position there.
struct ItemLocation {
    LaneRef lane;
    size_t index = 0;
};

struct TimelineIndex {
    // The trace's time span (TraceModel::time_span_ns()); both 0 for a trace without activity.
    int64_t start_ns = 0, end_ns = 0;
    // In display order: steps; per device (ascending): its bubbles, then its streams (ascending); per host thread
    // (by globalTid): its API calls, its host-blocking calls, its NVTX ranges. A track without items is left out.
    std::vector<TimelineTrack> tracks;
    // Launch flows and lookups (correlation ids, tracks by device/stream/thread, the bubbles of each sync call).
    std::shared_ptr<const detail::TimelineLinks> links;

    const TimelineLane& lane(LaneRef ref) const { return tracks[ref.track].lanes[ref.lane]; }
};

// Lays out every activity of `model` and every step, bubble and host-blocking call of `report` (which must be
// analyze(model, ...)). O(n log n) over the activities, once after loading; the index holds about 24 bytes per item.
// The functions below take an index made by it (a default-constructed index answers nothing).
TimelineIndex build_timeline(const TraceModel& model, const Report& report);
// The same with progress and cancel (ErrorCode::Cancelled, "timeline cancelled").
Expected<TimelineIndex> build_timeline(const TraceModel& model, const Report& report, const ProgressHook& progress);

// The folding threshold in pixels (Tracy's MinVisSize is 3 px as well).
inline constexpr double kFoldMinPx = 3.0;

// One entry of a query: a single item, or a fold of `count` consecutive items of the lane.
struct TimelineEntry {
    // A single item: its own start and end, not clipped to the window. A fold: the start of its first item and the
    // end of its last.
    int64_t start_ns = 0, end_ns = 0;
    uint32_t first = 0; // the lane index of the (first) item
    uint32_t count = 1; // 1: a single item; more: the fold of items [first, first + count)
    uint8_t category = 0; // the item's; for a fold, the category with the most summed duration (ties: lower value)
    ItemRef ref; // the (first) item

    bool folded() const { return count > 1; }
};

// The entries to draw for `lane` in the window [t0_ns, t1_ns) at width_px pixels (the time span of the window over
// its width in pixels is the scale; min_px of it, in ns, is the folding width w):
// - an item is visible when it starts before t1 and ends after t0 (a zero-length item: starts in [t0, t1));
// - an item is narrow when its visible part (clipped to the window) is shorter than w;
// - a wide item is returned as it is;
// - a narrow item starts a fold at s = max(its start, t0): the fold takes it and every following item that starts
//   before s + w, except a last one that is wide, which is returned on its own after the fold. A fold of one item is
//   returned as that single item (drawn at least a pixel wide by the GUI).
// Entries come in lane order and share no item. A narrow entry (a fold or a lone narrow item) is followed by one that
// starts at least w after it unless that one is wide. Nothing is returned when width_px <= 0 or t1_ns <= t0_ns. The
// cost is O(entries · (log n + kLaneBlockItems)), at most about 2 · width_px / min_px entries: independent of how many
// items lie in the window. min_px <= 0 folds nothing (every visible item is returned).
std::vector<TimelineEntry> query(
    const TimelineIndex& index, LaneRef lane, int64_t t0_ns, int64_t t1_ns, int width_px, double min_px = kFoldMinPx);
// The same, appending to `out` (cleared first), so that a view can reuse its buffer frame after frame.
void query(const TimelineIndex& index, LaneRef lane, int64_t t0_ns, int64_t t1_ns, int width_px, double min_px,
    std::vector<TimelineEntry>& out);

// Launch flows (docs/export.md "What is in the file": flows from launch to kernel). The API call that launched a
// kernel, memcpy or memset (by correlation id; when a runtime and a driver call share it, the runtime call, which the
// program made): its row in TraceModel::api_calls, nullopt when none (correlation id 0, or no call with it) or when
// `gpu_item` is not GPU work or its row is out of range. `model` is the one the index was built from. O(1) when
// correlation ids are dense, else O(log n).
std::optional<size_t> launching_call(const TimelineIndex& index, const TraceModel& model, ItemRef gpu_item);
// The GPU work launched by the API call at `api_row`: every kernel, memcpy and memset with its correlation id (a CUDA
// graph launch has many), kernels first, each table in row order; empty for a row out of range. O(log n + result).
std::vector<ItemRef> launched_work(const TimelineIndex& index, const TraceModel& model, size_t api_row);

// The bubbles (indices into Report::bubbles.bubbles) charged by rule 1 to the host-blocking call `sync_call` (an
// index into Report::blocking_calls): one per device and step the gap it caused touches; empty when none.
std::span<const uint32_t> sync_bubbles(const TimelineIndex& index, size_t sync_call);

// Where an item is drawn; nullopt for an item the index does not hold (a row out of range). O(lanes · log n).
std::optional<ItemLocation> locate(
    const TimelineIndex& index, const TraceModel& model, const Report& report, ItemRef item);

// One value of an item's details. Times, durations and sizes stay numbers: the viewer formats them as its axis does.
struct DetailField {
    enum class Unit : uint8_t {
        Text, // `text`
        Time, // `value`: ns since the session start
        Duration, // `value`: ns
        Bytes, // `value`
        Count, // `value`
    };
    std::string label;
    Unit unit = Unit::Text;
    std::string text;
    int64_t value = 0;
};

// What a tooltip and the details panel show for one item: a title and labelled values in display order. A kernel:
// its name, then start, duration, device, stream, class, launch call, launch delay, thread, correlation id, graph id
// (when launched from a graph) and step; a bubble: its cause, device, step and, for `sync`, the call charged; a sync:
// its kind, thread, device, stream, the GPU idle time it caused and the NVTX path at the call. Only the fields that
// apply are given.
struct ItemDetails {
    std::string title;
    std::vector<DetailField> fields;
};
ItemDetails describe_item(const TimelineIndex& index, const TraceModel& model, const Report& report, ItemRef item);

// The text drawn inside an item's box: the kernel's demangled name (short name when empty), the API name, the NVTX
// text, "memcpy HtoD", "memset", "step 12", the bubble's cause, the sync call's API name.
std::string item_name(const TraceModel& model, const Report& report, ItemRef item);

// A memcpy's kind as Nsight Systems shows it ("HtoD", "DtoH", ...; CUpti_ActivityMemcpyKind) and a memory kind in
// words ("pageable", "pinned", "device", ...; schema::MemoryKind); "unknown" for values outside the enums.
std::string_view copy_kind_name(int32_t kind);
std::string_view memory_kind_name(int32_t kind);

} // namespace fp8scope::analyzer
