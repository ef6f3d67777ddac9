// The analyzer's in-memory model of one trace: columnar tables (struct of arrays), one per activity kind, with
// strings in one table. The loader fills it from an fp8scope trace or an Nsight Systems export; everything
// downstream (analyses, CLI, GUI) reads only this model.
//
// Invariants the loader guarantees (a trace that breaks one is refused, never half-loaded):
// - every time is ns relative to the session start, within +-kMaxTraceTimeNs, and every end >= its start;
// - kernels on one (device, stream) do not overlap, outside CUDA graphs (see ClippedKernels);
// - every StringRef indexes `strings`, and every string is valid UTF-8 (bad sequences become U+FFFD);
// - rows of each activity table are sorted by start (stable for equal starts).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer {

// Index into TraceModel::strings. Dense from 0, unlike the file's StringIds ids, which can be anything.
struct StringRef {
    uint32_t index = 0;
    friend bool operator==(StringRef, StringRef) = default;
};

enum class TraceSource { Fp8scope, Nsight };

// The largest distance from the session start a time may have: 2^53 ns, about 104 days, also the largest integer a
// double holds exactly. Every difference of two times, and every sum the analyses make of non-overlapping intervals
// over steps and devices, then stays far from int64's limits; a time beyond it is refused as invalid.
inline constexpr int64_t kMaxTraceTimeNs = int64_t { 1 } << 53;

struct StringTable {
    std::vector<std::string> values;
    std::string_view operator[](StringRef ref) const { return values[ref.index]; }
    size_t size() const { return values.size(); }
};

struct KernelTable {
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> device_id, stream_id, correlation_id;
    std::vector<StringRef> name; // demangled
    std::vector<StringRef> short_name;
    // 0: not launched from a graph. CUPTI's graphId is 32 bits (CUpti_ActivityKernel*::graphId), and 4 bytes a row
    // instead of 8 is 40 MB off a 10 M-kernel trace (docs/benchmarks.md "The analyzer at the speed of its storage").
    std::vector<uint32_t> graph_id;
    size_t size() const { return start_ns.size(); }
};

// The host thread (globalTid) of each row of a table, kept as a 32-bit index into the table's distinct threads: the
// threads that call CUDA are few, and 4 bytes a row instead of 8 is 40 MB off a 10 M-call trace
// (docs/benchmarks.md "The analyzer at the speed of its storage"). Reads like a vector of globalTids; code that
// reorders rows moves `index` along with the other columns.
class ThreadColumn {
public:
    int64_t operator[](size_t row) const { return global_tids_[index[row]]; }
    size_t size() const { return index.size(); }
    void reserve(size_t rows) { index.reserve(rows); }
    void push_back(int64_t global_tid);

    std::vector<uint32_t> index; // per row, into the distinct threads

private:
    std::vector<int64_t> global_tids_; // distinct, in order of first appearance
    std::unordered_map<int64_t, uint32_t> position_; // global_tid -> its place in global_tids_
};

struct ApiTable {
    std::vector<int64_t> start_ns, end_ns;
    ThreadColumn global_tid;
    std::vector<uint32_t> correlation_id;
    std::vector<StringRef> name;
    std::vector<uint8_t> is_driver; // eventClass CUDA_DRIVER
    std::vector<int32_t> return_value;
    size_t size() const { return start_ns.size(); }
};

struct SyncTable {
    static constexpr uint32_t kNoStream = UINT32_MAX;
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> device_id, stream_id /* kNoStream when not a stream sync */, correlation_id;
    std::vector<int32_t> sync_type; // schema::SyncType
    size_t size() const { return start_ns.size(); }
};

struct MemcpyTable {
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> device_id, stream_id, correlation_id;
    std::vector<uint64_t> bytes;
    std::vector<int32_t> copy_kind, src_kind, dst_kind; // schema::MemcpyKind, schema::MemoryKind (nsys numbering)
    size_t size() const { return start_ns.size(); }
};

struct MemsetTable {
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> device_id, stream_id, correlation_id;
    std::vector<uint64_t> bytes;
    std::vector<int32_t> mem_kind;
    size_t size() const { return start_ns.size(); }
};

struct NvtxTable {
    static constexpr int64_t kNoEnd = INT64_MIN; // marks and ranges never closed
    std::vector<int64_t> start_ns, end_ns;
    std::vector<int32_t> event_type; // schema::NvtxEventType
    std::vector<StringRef> text;
    std::vector<int64_t> global_tid;
    size_t size() const { return start_ns.size(); }
};

struct GpuInfo {
    int32_t id = 0;
    std::string name, bus_location, uuid, chip_name;
    int64_t total_memory_bytes = 0;
    int64_t memory_bandwidth_bytes_per_s = 0;
    int64_t clock_rate_hz = 0;
    int32_t sm_count = 0;
    int32_t compute_major = 0, compute_minor = 0;

    friend bool operator==(const GpuInfo&, const GpuInfo&) = default;
};

struct TensorSite {
    int64_t id = 0;
    StringRef name;
    std::optional<StringRef> nvtx_path;
    int32_t ordinal = 0;
    int64_t rows = 0, cols = 0, batch = 1;
    int32_t dtype = 0, role = 0, source = 0;
    // ENUM_FP8SCOPE_SCALE_RECIPE (1.5): how an FP8 GEMM operand is scaled; nullopt when not known (a high-precision
    // operand, a probe, an older trace). A value this reader does not know is kept as it is.
    std::optional<int32_t> scale_recipe;
};

// Row-wise: tensor samples are few (sampled), and each carries a histogram.
struct TensorStats {
    int64_t site_id = 0;
    std::optional<int64_t> step;
    int64_t timestamp_ns = 0;
    uint32_t device_id = 0, stream_id = 0;
    std::optional<uint32_t> correlation_id;
    int32_t dtype = 0, target_format = 0;
    int64_t numel = 0;
    std::optional<double> scale, scale_inv;
    double amax = 0;
    std::optional<double> min_nonzero_abs;
    int64_t zeros = 0, nans = 0, infs = 0, overflows = 0, underflows = 0, subnormals = 0, saturated = 0;
    double sum = 0, sum_squares = 0, sum_cubes = 0, sum_fourth = 0;
    int32_t hist_first_exponent = 0;
    std::vector<uint64_t> exponent_histogram;
};

// FP8SCOPE_BLOCK_STATS (1.6): per-block statistics of a GEMM operand scaled per row or per block, one beside each of
// its TensorStats samples (same site_id, step and timestamp; docs/tensor-stats.md, "Per-block statistics"). Values
// are dequantized (code times its block's scale_inv); blocks without a good scale (bad_scale_blocks) are left out of
// every block figure and of the histogram. Row-wise, as TensorStats.
struct BlockStats {
    int64_t site_id = 0;
    std::optional<int64_t> step;
    int64_t timestamp_ns = 0;
    int64_t block_rows = 0, block_cols = 0; // a block's shape in the operand's memory layout
    int64_t blocks = 0, bad_scale_blocks = 0, saturating_blocks = 0, subnormal_blocks = 0;
    int64_t numel = 0, zeros = 0, nans = 0, infs = 0, subnormals = 0, saturated = 0; // codes
    double amax = 0; // the largest block amax
    double block_amax_min = 0, block_amax_p50 = 0, block_amax_p99 = 0;
    std::optional<double> scale_inv_min, scale_inv_max; // over blocks with a good scale; nullopt when none
    int32_t hist_first_exponent = 0;
    std::vector<uint64_t> exponent_histogram;
};

struct Scalar {
    int64_t timestamp_ns = 0;
    std::optional<int64_t> step;
    StringRef name;
    double value = 0;
    int64_t global_tid = 0;
};

// Who wrote a step marker: the values of schema::StepMarkerSource (FP8SCOPE_STEP_MARKER.source, 1.7; NULL in older
// traces is Job). Job: step `step` begins here. Optimizer: the optimizer step that ends step `step` (the count of
// optimizer steps, from 0) ended here. OptimizerSkipped: GradScaler skipped that optimizer step here. A value this
// reader does not know is kept as its number.
enum class StepMarkerSource : int32_t { Job = 0, Optimizer = 1, OptimizerSkipped = 2 };

struct StepMarker {
    int64_t timestamp_ns = 0;
    int64_t step = 0;
    int64_t global_tid = 0;
    StepMarkerSource source = StepMarkerSource::Job;
};

// ThreadNames: names of host threads, for timeline tracks.
struct ThreadName {
    int64_t global_tid = 0;
    StringRef name;
};

struct Overhead {
    int64_t start_ns = 0, end_ns = 0;
    int32_t kind = 0;
};

struct Dropped {
    int64_t timestamp_ns = 0;
    int32_t source = 0;
    int64_t count = 0;
};

// The collector's own GPU work (tensor statistics kernels, their scratch memsets), moved out of the activity
// tables at load so that no analysis counts it as the job's (collector_work.hpp).
struct CollectorWorkTable {
    enum class Kind : uint8_t { Kernel, Memcpy, Memset };
    std::vector<int64_t> start_ns, end_ns;
    std::vector<uint32_t> device_id, stream_id;
    std::vector<Kind> kind;
    size_t size() const { return start_ns.size(); }
};

// One window of a windowed recording (FP8SCOPE_CAPTURE_WINDOW). end_ns is the trace's end for a window still open
// when the trace ended (the loader fills it in).
struct CaptureWindow {
    int64_t id = 0;
    int64_t start_ns = 0, end_ns = 0;
    bool open_at_end = false; // the file had no end: the job ended (or was killed) inside the window
    std::optional<int64_t> first_step, last_step;
    int32_t trigger = 0; // schema::CaptureTrigger

    friend bool operator==(const CaptureWindow&, const CaptureWindow&) = default;
};

// What the recording captured. `windowed` false (older traces, nsys exports, meta capture_mode "full"): the whole
// run; true: only `windows` (possibly none), and the analyses look at steps inside them only.
struct CaptureInfo {
    bool windowed = false;
    std::string mode = "full"; // meta capture_mode
    std::string options; // meta capture_options
    std::vector<CaptureWindow> windows; // in start order, not overlapping
    // A bounded recording (record --max-size; meta trace_max_bytes, capture_windows_dropped): its bound, 0 when
    // none, and how many of the oldest windows the collector deleted to stay under it.
    int64_t max_bytes = 0;
    int64_t windows_dropped = 0;

    friend bool operator==(const CaptureInfo&, const CaptureInfo&) = default;
};

// Kernels that started before the previous kernel of their (device, stream) had ended. One stream runs its kernels
// one after another, so this is timestamp skew or programmatic dependent launch; the loader clips each such kernel
// to start where the previous one ended (and to zero length when it ended before that), so that kernel time summed
// over a stream never exceeds the time the stream spans, and reports what it clipped. Kernels launched from a CUDA
// graph are left alone: a graph's branches run concurrently and CUPTI can report them on one stream.
struct ClippedKernels {
    int64_t count = 0;
    int64_t clipped_ns = 0; // total overlap removed
};

// What the file says about itself. For an Nsight export, fields nsys does not record stay empty / -1.
struct TraceMeta {
    TraceSource source = TraceSource::Fp8scope;
    int schema_major = 0, schema_minor = 0; // ours; for nsys, parsed from EXPORT_SCHEMA_VERSION when present
    std::string producer; // "fp8scope 0.1.0 (collector)" or "Nsight Systems export (schema 3.28.1)"
    std::string command_line, host;
    int64_t pid = -1;
    int32_t rank = -1, world_size = -1;
    int32_t cuda_runtime_version = 0, cuda_driver_version = 0, cupti_version = 0;
    int64_t session_start_utc_ns = 0;
    bool finished = false; // nsys exports are always complete: true
    std::string finish_reason;
    // Tensor statistics samples the collector skipped because of FP8SCOPE_STATS_CAP (meta tensor_stats_skipped):
    // not lost records, so not in dropped_records(). 0 when the trace does not say (older traces, nsys).
    int64_t tensor_stats_skipped = 0;
    // Every FP8SCOPE_META key and value as text, for display (`fp8scope info --format json` prints it).
    std::map<std::string, std::string> raw;

    friend bool operator==(const TraceMeta&, const TraceMeta&) = default;
};

struct TraceModel {
    std::string path;
    TraceMeta meta;
    StringTable strings;
    std::vector<GpuInfo> gpus;
    KernelTable kernels;
    ApiTable api_calls;
    SyncTable syncs;
    MemcpyTable memcpys;
    MemsetTable memsets;
    NvtxTable nvtx;
    std::vector<ThreadName> thread_names;
    std::vector<TensorSite> tensor_sites;
    std::vector<TensorStats> tensor_stats;
    std::vector<BlockStats> block_stats; // empty in traces before 1.6
    std::vector<Scalar> scalars;
    std::vector<StepMarker> step_markers;
    std::vector<Overhead> overheads;
    std::vector<Dropped> dropped;
    // FP8SCOPE_COLLECTOR_WORK as read, and the activities with those correlation ids (or, in older traces, named
    // as the collector's kernels), which the loader moved here out of kernels, memcpys, memsets and api_calls.
    std::vector<uint32_t> collector_correlation_ids;
    CollectorWorkTable collector_work;
    int64_t collector_api_calls = 0; // API calls of the collector's own work, removed from api_calls
    // Rows per table as found in the file, by table name (the tables the loader read, plus FP8SCOPE_KERNEL_LATENCY).
    std::map<std::string, int64_t> row_counts;
    ClippedKernels clipped_kernels;
    CaptureInfo capture;

    int64_t dropped_records() const;
    // Earliest start and latest end over every activity (kernels, API calls, syncs, copies, NVTX ranges);
    // nullopt for a trace with no activity.
    std::optional<std::pair<int64_t, int64_t>> time_span_ns() const;
};

} // namespace fp8scope::analyzer
