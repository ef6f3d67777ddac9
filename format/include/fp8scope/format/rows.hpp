// Row types the writer accepts, one per table of schema.hpp. Strings travel as StringId, interned once by
// TraceDb::intern; everything else is a plain value. Times are ns relative to the session start.
#pragma once

#include "fp8scope/format/schema.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope {

struct StringId {
    int64_t value = 0;
    friend bool operator==(StringId, StringId) = default;
};

// Everything about a launch that repeats from one launch of the same kernel to the next. TraceDb stores each
// distinct config once in FP8SCOPE_KERNEL_CONFIG and derives the demangled and short names from the mangled one.
struct KernelConfig {
    StringId mangled_name;
    std::array<int32_t, 3> grid { 1, 1, 1 };
    std::array<int32_t, 3> block { 1, 1, 1 };
    std::array<int32_t, 3> cluster { 0, 0, 0 };
    int32_t registers_per_thread = 0;
    int64_t static_shared_bytes = 0;
    int64_t dynamic_shared_bytes = 0;
    int64_t local_per_thread_bytes = 0;
    int64_t local_total_bytes = 0;
    int64_t shared_executed_bytes = 0;
    schema::KernelLaunchType launch_type = schema::KernelLaunchType::Regular;
    friend bool operator==(const KernelConfig&, const KernelConfig&) = default;
};

struct KernelRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t device_id = 0;
    uint32_t context_id = 0;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0; // 0: unknown (CUPTI_CORRELATION_ID_UNKNOWN)
    int64_t graph_id = 0;
    int64_t graph_node_id = 0;
    KernelConfig config;
    // CUPTI launch latency timestamps; both 0 when not collected (then no FP8SCOPE_KERNEL_LATENCY row).
    int64_t queued_ns = 0;
    int64_t submitted_ns = 0;
};

struct ApiRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    schema::EventClass event_class = schema::EventClass::CudaRuntime;
    int64_t global_tid = 0;
    uint32_t correlation_id = 0;
    StringId name; // CUPTI callback name with version suffix, e.g. "cudaLaunchKernel_v7000"
    int32_t return_value = 0;
};

struct SyncRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t device_id = 0;
    uint32_t context_id = 0;
    std::optional<uint32_t> stream_id;
    uint32_t correlation_id = 0;
    schema::SyncType sync_type = schema::SyncType::Unknown;
    std::optional<uint32_t> event_id;
    std::optional<uint64_t> event_sync_id;
};

struct MemcpyRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t device_id = 0;
    uint32_t context_id = 0;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0;
    uint64_t bytes = 0;
    schema::MemcpyKind copy_kind = schema::MemcpyKind::Unknown;
    schema::MemoryKind src_kind = schema::MemoryKind::Unknown;
    schema::MemoryKind dst_kind = schema::MemoryKind::Unknown;
    std::optional<uint32_t> src_device_id;
    std::optional<uint32_t> dst_device_id;
    int64_t graph_node_id = 0;
};

struct MemsetRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t device_id = 0;
    uint32_t context_id = 0;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0;
    uint32_t value = 0;
    uint64_t bytes = 0;
    schema::MemoryKind mem_kind = schema::MemoryKind::Device;
    int64_t graph_node_id = 0;
};

struct NvtxRow {
    int64_t start_ns = 0;
    std::optional<int64_t> end_ns; // none for marks and ranges never closed
    schema::NvtxEventType event_type = schema::NvtxEventType::PushPopRange;
    std::optional<int64_t> range_id;
    std::optional<int32_t> category;
    std::optional<uint32_t> color;
    StringId text;
    int64_t global_tid = 0;
    std::optional<int64_t> end_global_tid;
    std::optional<int64_t> domain_id;
};

struct ThreadNameRow {
    StringId name;
    std::optional<int32_t> priority;
    int64_t global_tid = 0;
};

struct GpuInfoRow {
    int32_t id = 0;
    std::string name;
    std::string bus_location;
    int64_t total_memory_bytes = 0;
    int64_t memory_bandwidth_bytes_per_s = 0;
    int64_t clock_rate_hz = 0;
    int32_t sm_count = 0;
    std::string uuid;
    std::string chip_name;
    int32_t compute_major = 0;
    int32_t compute_minor = 0;
};

// Written once when the trace is created (FP8SCOPE_META, TARGET_INFO_SESSION_START_TIME).
struct SessionInfo {
    int64_t utc_epoch_ns = 0; // session start; every other time is relative to it
    std::string producer; // "fp8scope 0.1.0 (collector)", "fp8scope 0.1.0 (scenario builder)"
    std::string command_line;
    std::string host;
    int64_t pid = 0;
    int32_t rank = -1;
    int32_t world_size = -1;
    int32_t cuda_runtime_version = 0; // 0: unknown
    int32_t cuda_driver_version = 0;
    int32_t cupti_version = 0;
    std::string capture_mode = "full"; // meta capture_mode: full, steps, periodic, cudaProfilerApi, time
    std::string capture_options; // meta capture_options: the options as given, empty for "full"
    std::string kernel_timestamps; // meta kernel_timestamps ("hardware", "software: why"); not written when empty
};

struct TensorSiteRow {
    int64_t id = 0; // chosen by the caller, unique per trace
    StringId name;
    std::optional<StringId> nvtx_path;
    int32_t ordinal = 0;
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t batch = 1;
    schema::Dtype dtype = schema::Dtype::Float32;
    schema::TensorRole role = schema::TensorRole::Other;
    schema::StatsSource source = schema::StatsSource::ExplicitProbe;
    std::optional<schema::ScaleRecipe> scale_recipe; // FP8 GEMM operands: how they are scaled (1.5)
};

struct TensorStatsRow {
    int64_t site_id = 0;
    std::optional<int64_t> step;
    int64_t timestamp_ns = 0;
    uint32_t device_id = 0;
    uint32_t stream_id = 0;
    std::optional<uint32_t> correlation_id;
    schema::Dtype dtype = schema::Dtype::Float32;
    schema::Fp8Format target_format = schema::Fp8Format::None;
    int64_t numel = 0;
    std::optional<double> scale;
    std::optional<double> scale_inv;
    double amax = 0;
    std::optional<double> min_nonzero_abs;
    int64_t zeros = 0;
    int64_t nans = 0;
    int64_t infs = 0;
    int64_t overflows = 0;
    int64_t underflows = 0;
    int64_t subnormals = 0;
    int64_t saturated = 0;
    double sum = 0;
    double sum_squares = 0;
    double sum_cubes = 0;
    double sum_fourth = 0;
    // Counts of nonzero finite elements by floor(log2|x|), starting at hist_first_exponent.
    int32_t hist_first_exponent = 0;
    std::vector<uint64_t> exponent_histogram;
};

// One per-block statistics sample of a GEMM operand scaled per row or per block (format 1.6; docs/tensor-stats.md,
// "Per-block statistics"). Values are dequantized: code value times the scale_inv of the code's block.
struct BlockStatsRow {
    int64_t site_id = 0;
    std::optional<int64_t> step;
    int64_t timestamp_ns = 0;
    int64_t block_rows = 0,
            block_cols = 0; // a block's shape in the operand's memory layout (rows of contiguous elements)
    int64_t blocks = 0;
    int64_t bad_scale_blocks = 0; // scale_inv not positive and finite: left out of every block figure and the histogram
    int64_t saturating_blocks = 0; // two or more codes at +-max
    int64_t subnormal_blocks = 0; // at least one subnormal code
    int64_t numel = 0, zeros = 0, nans = 0, infs = 0, subnormals = 0, saturated = 0; // codes
    double amax = 0; // max |x| over dequantized values: the largest block amax
    double block_amax_min = 0, block_amax_p50 = 0, block_amax_p99 = 0;
    std::optional<double> scale_inv_min, scale_inv_max; // over blocks with a good scale; nullopt when none
    int32_t hist_first_exponent = 0; // dequantized values by octave, as TensorStatsRow's histogram
    std::vector<uint64_t> exponent_histogram;
};

struct ScalarRow {
    int64_t timestamp_ns = 0;
    std::optional<int64_t> step;
    StringId name;
    double value = 0;
    int64_t global_tid = 0;
};

struct StepMarkerRow {
    int64_t timestamp_ns = 0; // Job: the step begins here; Optimizer(Skipped): an optimizer step ended (was skipped)
    int64_t step = 0;
    int64_t global_tid = 0;
    schema::StepMarkerSource source = schema::StepMarkerSource::Job;
};

struct OverheadRow {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    schema::OverheadKind kind = schema::OverheadKind::Other;
    std::optional<int64_t> global_tid;
    std::optional<uint32_t> device_id;
};

// One capture window (FP8SCOPE_CAPTURE_WINDOW). Written when it opens (end unset) and again, under the same id,
// when it closes, so that a job killed inside a window leaves a row that says so.
struct CaptureWindowRow {
    int64_t id = 0; // 1, 2, ... in the order the windows opened
    int64_t start_ns = 0;
    std::optional<int64_t> end_ns;
    std::optional<int64_t> first_step; // the first and last step that began inside the window
    std::optional<int64_t> last_step;
    schema::CaptureTrigger trigger = schema::CaptureTrigger::Steps;
};

struct DroppedRow {
    int64_t timestamp_ns = 0;
    schema::DropSource source = schema::DropSource::CuptiNoBuffer;
    int64_t count = 0;
    std::optional<uint32_t> device_id;
};

} // namespace fp8scope
