// The fp8scope trace format, version 1: every table (declared once, as schema_table.hpp describes), column, enum
// (schema_enums.hpp), meta key (schema_meta.hpp) and table name (schema_names.hpp), defined once.
//
// Both the writer (format/, linked into the collector) and the loader (analyzer/) compile this header, and
// docs/trace-format.md is checked against it by a test. Core tables copy the names and columns of the Nsight
// Systems SQLite export (schema 3.x, see shared/reference/nsys_cupti.md §1.4) as a subset, so SQL written for
// nsys runs on our traces; nsys_schema.hpp declares the export's tables from these. Our own tables carry the prefix
// FP8SCOPE_.
#pragma once

#include "fp8scope/format/schema_enums.hpp"
#include "fp8scope/format/schema_meta.hpp"
#include "fp8scope/format/schema_names.hpp"
#include "fp8scope/format/schema_table.hpp"
#include "fp8scope/format/schema_view.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fp8scope::schema {

// Version rules follow nsys' EXPORT_SCHEMA_VERSION: a new major version may change anything and is refused by
// older readers; a new minor version only adds tables or columns and is read by older readers.
inline constexpr int kMajorVersion = 1;
// 1.1: FP8SCOPE_COLLECTOR_WORK; 1.2: meta row_count.<TABLE>, FP8SCOPE_CAPTURE_WINDOW, meta capture_mode; 1.3: drop
// source CAPTURE_DETACH; 1.4: FP8SCOPE_SCALAR_NAN, FP8SCOPE_TENSOR_STATS.nanColumns; 1.5:
// FP8SCOPE_TENSOR_SITE.scaleRecipe, ENUM_FP8SCOPE_SCALE_RECIPE, stats source TORCH_SCALED_MM; 1.6:
// FP8SCOPE_BLOCK_STATS; 1.7: FP8SCOPE_STEP_MARKER.source, ENUM_FP8SCOPE_STEP_MARKER_SOURCE
inline constexpr int kMinorVersion = 7;
// PRAGMA user_version holds (major << 16) | minor.
inline constexpr int32_t encode_user_version(int major, int minor)
{
    return (major << 16) | minor;
}
inline constexpr int decode_major(int32_t user_version)
{
    return user_version >> 16;
}
inline constexpr int decode_minor(int32_t user_version)
{
    return user_version & 0xFFFF;
}

namespace detail {
using C = Column;
inline constexpr bool N = true; // nullable
inline constexpr bool R = false; // required

inline constexpr Column kStringIds[] = {
    { "id", "INTEGER", R, "id" },
    { "value", "TEXT", R, "text" },
};

// Kernels are stored compactly (goal: <= 48 bytes per kernel on disk): the start and a duration, and one
// id for the kernel function plus its launch configuration, which repeats across launches. The nsys-shaped
// CUPTI_ACTIVITY_KIND_KERNEL is a view over these two tables.
inline constexpr Column kKernel[] = {
    { "id", "INTEGER", R, "id" },
    { "start", "INTEGER", R, "ns" },
    { "duration", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "contextId", "INTEGER", R, "id" },
    { "streamId", "INTEGER", R, "id" },
    { "correlationId", "INTEGER", R, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "configId", "INTEGER", R, "FP8SCOPE_KERNEL_CONFIG.id" },
    { "graphId", "INTEGER", R, "id" },
    { "graphNodeId", "INTEGER", R, "id" },
};

inline constexpr Column kKernelConfig[] = {
    { "id", "INTEGER", R, "id" },
    { "mangledName", "INTEGER", R, "StringIds.id" },
    { "demangledName", "INTEGER", R, "StringIds.id" },
    { "shortName", "INTEGER", R, "StringIds.id" },
    { "gridX", "INTEGER", R, "blocks" },
    { "gridY", "INTEGER", R, "blocks" },
    { "gridZ", "INTEGER", R, "blocks" },
    { "blockX", "INTEGER", R, "threads" },
    { "blockY", "INTEGER", R, "threads" },
    { "blockZ", "INTEGER", R, "threads" },
    { "clusterX", "INTEGER", R, "blocks" },
    { "clusterY", "INTEGER", R, "blocks" },
    { "clusterZ", "INTEGER", R, "blocks" },
    { "registersPerThread", "INTEGER", R, "registers" },
    { "staticSharedMemory", "INTEGER", R, "bytes" },
    { "dynamicSharedMemory", "INTEGER", R, "bytes" },
    { "localMemoryPerThread", "INTEGER", R, "bytes" },
    { "localMemoryTotal", "INTEGER", R, "bytes" },
    { "sharedMemoryExecuted", "INTEGER", R, "bytes" },
    { "launchType", "INTEGER", R, "ENUM_CUPTI_KERNEL_LAUNCH_TYPE" },
};

inline constexpr Column kKernelView[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "contextId", "INTEGER", R, "id" },
    { "streamId", "INTEGER", R, "id" },
    { "correlationId", "INTEGER", R, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "globalPid", "INTEGER", R, "globalPid" },
    { "demangledName", "INTEGER", R, "StringIds.id" },
    { "shortName", "INTEGER", R, "StringIds.id" },
    { "mangledName", "INTEGER", R, "StringIds.id" },
    { "launchType", "INTEGER", R, "ENUM_CUPTI_KERNEL_LAUNCH_TYPE" },
    { "registersPerThread", "INTEGER", R, "registers" },
    { "gridX", "INTEGER", R, "blocks" },
    { "gridY", "INTEGER", R, "blocks" },
    { "gridZ", "INTEGER", R, "blocks" },
    { "blockX", "INTEGER", R, "threads" },
    { "blockY", "INTEGER", R, "threads" },
    { "blockZ", "INTEGER", R, "threads" },
    { "staticSharedMemory", "INTEGER", R, "bytes" },
    { "dynamicSharedMemory", "INTEGER", R, "bytes" },
    { "localMemoryPerThread", "INTEGER", R, "bytes" },
    { "localMemoryTotal", "INTEGER", R, "bytes" },
    { "sharedMemoryExecuted", "INTEGER", R, "bytes" },
    { "graphNodeId", "INTEGER", R, "id" },
    { "graphId", "INTEGER", R, "id" },
    { "clusterX", "INTEGER", R, "blocks" },
    { "clusterY", "INTEGER", R, "blocks" },
    { "clusterZ", "INTEGER", R, "blocks" },
};

// Runtime and driver API calls share one table, told apart by eventClass (ENUM_NSYS_EVENT_CLASS).
inline constexpr Column kRuntime[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "eventClass", "INTEGER", R, "ENUM_NSYS_EVENT_CLASS" },
    { "globalTid", "INTEGER", R, "globalTid" },
    { "correlationId", "INTEGER", R, "id" },
    { "nameId", "INTEGER", R, "StringIds.id" },
    { "returnValue", "INTEGER", R, "CUresult or cudaError_t" },
};

inline constexpr Column kSynchronization[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "contextId", "INTEGER", R, "id" },
    { "streamId", "INTEGER", N, "id, NULL for context and event syncs" },
    { "correlationId", "INTEGER", R, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "globalPid", "INTEGER", R, "globalPid" },
    { "syncType", "INTEGER", R, "ENUM_CUPTI_SYNC_TYPE" },
    { "eventId", "INTEGER", N, "id, NULL for context and stream syncs" },
    { "eventSyncId", "INTEGER", N, "id, NULL for context and stream syncs" },
};

inline constexpr Column kMemcpy[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "contextId", "INTEGER", R, "id" },
    { "streamId", "INTEGER", R, "id" },
    { "correlationId", "INTEGER", R, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "globalPid", "INTEGER", R, "globalPid" },
    { "bytes", "INTEGER", R, "bytes" },
    { "copyKind", "INTEGER", R, "ENUM_CUDA_MEMCPY_OPER" },
    { "srcKind", "INTEGER", R, "ENUM_CUDA_MEM_KIND" },
    { "dstKind", "INTEGER", R, "ENUM_CUDA_MEM_KIND" },
    { "srcDeviceId", "INTEGER", N, "TARGET_INFO_GPU.id, NULL for host memory" },
    { "dstDeviceId", "INTEGER", N, "TARGET_INFO_GPU.id, NULL for host memory" },
    { "graphNodeId", "INTEGER", R, "id" },
};

inline constexpr Column kMemset[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "contextId", "INTEGER", R, "id" },
    { "streamId", "INTEGER", R, "id" },
    { "correlationId", "INTEGER", R, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "globalPid", "INTEGER", R, "globalPid" },
    { "value", "INTEGER", R, "byte value" },
    { "bytes", "INTEGER", R, "bytes" },
    { "memKind", "INTEGER", R, "ENUM_CUDA_MEM_KIND" },
    { "graphNodeId", "INTEGER", R, "id" },
};

inline constexpr Column kNvtxEvents[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", N, "ns, NULL for marks and ranges never closed" },
    { "eventType", "INTEGER", R, "ENUM_NSYS_EVENT_TYPE" },
    { "rangeId", "INTEGER", N, "id" },
    { "category", "INTEGER", N, "id" },
    { "color", "INTEGER", N, "ARGB" },
    { "text", "TEXT", N, "text, used when textId is NULL" },
    { "globalTid", "INTEGER", R, "globalTid" },
    { "endGlobalTid", "INTEGER", N, "globalTid" },
    { "textId", "INTEGER", N, "StringIds.id" },
    { "domainId", "INTEGER", N, "id" },
};

inline constexpr Column kThreadNames[] = {
    { "nameId", "INTEGER", R, "StringIds.id" },
    { "priority", "INTEGER", N, "scheduler priority" },
    { "globalTid", "INTEGER", R, "globalTid" },
};

inline constexpr Column kTargetInfoGpu[] = {
    { "id", "INTEGER", R, "id" },
    { "name", "TEXT", R, "text" },
    { "busLocation", "TEXT", R, "PCI bus id" },
    { "totalMemory", "INTEGER", R, "bytes" },
    { "memoryBandwidth", "INTEGER", R, "bytes/s" },
    { "clockRate", "INTEGER", R, "Hz" },
    { "smCount", "INTEGER", R, "count" },
    { "uuid", "TEXT", R, "text" },
    { "chipName", "TEXT", R, "text" },
    { "computeMajor", "INTEGER", R, "version" },
    { "computeMinor", "INTEGER", R, "version" },
};

inline constexpr Column kSessionStart[] = {
    { "utcEpochNs", "INTEGER", R, "ns since the Unix epoch" },
    { "utcTime", "TEXT", R, "ISO 8601 UTC" },
    { "localTime", "TEXT", R, "ISO 8601 local" },
};

// Every ENUM_* table has this shape (nsys: id, name, label; there is no value column).
inline constexpr Column kEnum[] = {
    { "id", "INTEGER", R, "id" },
    { "name", "TEXT", R, "text" },
    { "label", "TEXT", R, "text" },
};

// Key/value metadata. Keys are listed in schema::meta (schema_meta.hpp).
inline constexpr Column kMeta[] = {
    { "key", "TEXT", R, "text" },
    { "value", "ANY", R, "text or integer, by key" },
};

inline constexpr Column kKernelLatency[] = {
    { "kernelId", "INTEGER", R, "FP8SCOPE_KERNEL.id" },
    { "queued", "INTEGER", R, "ns" },
    { "submitted", "INTEGER", R, "ns" },
};

// A tensor site is the stable identity of a tensor across steps (docs/collector.md "Tensor statistics", site
// identity): the NVTX range path, the ordinal among GEMMs of the same shape within the step (without steps: within
// the GEMM period the collector learned; -1 when neither was known), the shape, the dtype and the operand role.
inline constexpr Column kTensorSite[] = {
    { "id", "INTEGER", R, "id" },
    { "nameId", "INTEGER", R, "StringIds.id" },
    { "nvtxPathId", "INTEGER", N, "StringIds.id" },
    { "ordinal", "INTEGER", R, "count" },
    { "rows", "INTEGER", R, "elements" },
    { "cols", "INTEGER", R, "elements" },
    { "batch", "INTEGER", R, "count" },
    { "dtype", "INTEGER", R, "ENUM_FP8SCOPE_DTYPE" },
    { "role", "INTEGER", R, "ENUM_FP8SCOPE_TENSOR_ROLE" },
    { "source", "INTEGER", R, "ENUM_FP8SCOPE_STATS_SOURCE" },
    { "scaleRecipe", "INTEGER", N, "ENUM_FP8SCOPE_SCALE_RECIPE", 5 },
};

inline constexpr Column kTensorStats[] = {
    { "id", "INTEGER", R, "id" },
    { "siteId", "INTEGER", R, "FP8SCOPE_TENSOR_SITE.id" },
    { "step", "INTEGER", N, "step number, NULL without step markers" },
    { "timestamp", "INTEGER", R, "ns" },
    { "deviceId", "INTEGER", R, "TARGET_INFO_GPU.id" },
    { "streamId", "INTEGER", R, "id" },
    { "correlationId", "INTEGER", N, "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId" },
    { "dtype", "INTEGER", R, "ENUM_FP8SCOPE_DTYPE" },
    { "targetFormat", "INTEGER", R, "ENUM_FP8SCOPE_FP8_FORMAT" },
    { "numel", "INTEGER", R, "elements" },
    { "scale", "REAL", N, "factor" },
    { "scaleInv", "REAL", N, "factor" },
    { "amax", "REAL", R, "value" },
    { "minNonzeroAbs", "REAL", N, "value, NULL when no element is nonzero" },
    { "zeros", "INTEGER", R, "elements" },
    { "nans", "INTEGER", R, "elements" },
    { "infs", "INTEGER", R, "elements" },
    { "overflows", "INTEGER", R, "elements" },
    { "underflows", "INTEGER", R, "elements" },
    { "subnormals", "INTEGER", R, "elements" },
    { "saturated", "INTEGER", R, "elements" },
    { "sum", "REAL", R, "value" },
    { "sumSquares", "REAL", R, "value^2" },
    { "sumCubes", "REAL", R, "value^3" },
    { "sumFourth", "REAL", R, "value^4" },
    { "histFirstExponent", "INTEGER", R, "power of two" },
    { "exponentHistogram", "BLOB", R, "little-endian uint64 counts" },
    { "nanColumns", "INTEGER", N, "bit mask, NULL for 0", 4 },
};

// SQLite stores a bound NaN as NULL (sqlite.org/c3ref/bind_blob.html), which a NOT NULL REAL refuses and a
// nullable one reads as "unknown". The writer therefore never binds a NaN: a NaN cell of FP8SCOPE_TENSOR_STATS is
// stored as NULL with its bit set in nanColumns (1.4). Bit i stands for the i-th REAL column of kTensorStats, in
// this order; only the nullable ones can be flagged (the NOT NULL ones are never NaN: the probes leave NaN
// elements out of amax and the sums, docs/tensor-stats.md).
inline constexpr std::string_view kTensorStatsNanColumns[]
    = { "scale", "scaleInv", "amax", "minNonzeroAbs", "sum", "sumSquares", "sumCubes", "sumFourth" };

// Per-block statistics of a GEMM operand scaled per row or per block (1.6; docs/tensor-stats.md, "Per-block
// statistics"): one row beside each FP8SCOPE_TENSOR_STATS row of such an operand, with the same siteId, step and
// timestamp. Values are dequantized (code times its block's scaleInv); blocks whose scaleInv is not positive and
// finite are counted in badScaleBlocks and left out of every block figure and of the histogram.
inline constexpr Column kBlockStats[] = {
    { "id", "INTEGER", R, "id" },
    { "siteId", "INTEGER", R, "FP8SCOPE_TENSOR_SITE.id" },
    { "step", "INTEGER", N, "step number, NULL without step markers" },
    { "timestamp", "INTEGER", R, "ns" },
    { "blockRows", "INTEGER", R, "elements" },
    { "blockCols", "INTEGER", R, "elements" },
    { "blocks", "INTEGER", R, "blocks" },
    { "badScaleBlocks", "INTEGER", R, "blocks" },
    { "saturatingBlocks", "INTEGER", R, "blocks" },
    { "subnormalBlocks", "INTEGER", R, "blocks" },
    { "numel", "INTEGER", R, "elements" },
    { "zeros", "INTEGER", R, "elements" },
    { "nans", "INTEGER", R, "elements" },
    { "infs", "INTEGER", R, "elements" },
    { "subnormals", "INTEGER", R, "elements" },
    { "saturated", "INTEGER", R, "elements" },
    { "amax", "REAL", R, "value" },
    { "blockAmaxMin", "REAL", R, "value" },
    { "blockAmaxP50", "REAL", R, "value" },
    { "blockAmaxP99", "REAL", R, "value" },
    { "scaleInvMin", "REAL", N, "factor, NULL when no block has a good scale" },
    { "scaleInvMax", "REAL", N, "factor, NULL when no block has a good scale" },
    { "histFirstExponent", "INTEGER", R, "power of two" },
    { "exponentHistogram", "BLOB", R, "little-endian uint64 counts" },
};

inline constexpr Column kScalar[] = {
    { "timestamp", "INTEGER", R, "ns" },
    { "step", "INTEGER", N, "step number" },
    { "nameId", "INTEGER", R, "StringIds.id" },
    { "value", "REAL", R, "value" },
    { "globalTid", "INTEGER", R, "globalTid" },
};

// A scalar logged as NaN (1.4): FP8SCOPE_SCALAR.value is NOT NULL and SQLite cannot store a NaN, so the writer
// puts these here. An older reader does not know the table and reads the other scalars as before.
inline constexpr Column kScalarNan[] = {
    { "timestamp", "INTEGER", R, "ns" },
    { "step", "INTEGER", N, "step number" },
    { "nameId", "INTEGER", R, "StringIds.id" },
    { "globalTid", "INTEGER", R, "globalTid" },
};

inline constexpr Column kStepMarker[] = {
    { "timestamp", "INTEGER", R, "ns" },
    { "step", "INTEGER", R, "step number" },
    { "globalTid", "INTEGER", R, "globalTid" },
    { "source", "INTEGER", N, "ENUM_FP8SCOPE_STEP_MARKER_SOURCE", 7 },
};

inline constexpr Column kOverhead[] = {
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", R, "ns" },
    { "kind", "INTEGER", R, "ENUM_FP8SCOPE_OVERHEAD_KIND" },
    { "globalTid", "INTEGER", N, "globalTid" },
    { "deviceId", "INTEGER", N, "TARGET_INFO_GPU.id" },
};

// The correlation ids of the collector's own CUDA calls (tensor statistics kernels, their scratch memsets and
// allocations): kernels, copies and memsets with these ids are the profiler's work, not the job's.
inline constexpr Column kCollectorWork[] = {
    { "correlationId", "INTEGER", R, "correlationId" },
};

// The windows a windowed recording captured (`fp8scope record --capture-*`, docs/collector.md "Capture
// windows"). A trace without the table, or with meta capture_mode "full", captured the whole run.
inline constexpr Column kCaptureWindow[] = {
    { "id", "INTEGER", R, "id" },
    { "start", "INTEGER", R, "ns" },
    { "end", "INTEGER", N, "ns, NULL while the window is open (a trace that ended inside it)" },
    { "firstStep", "INTEGER", N, "step number, NULL when no step began in the window" },
    { "lastStep", "INTEGER", N, "step number, NULL when no step began in the window" },
    { "trigger", "INTEGER", R, "ENUM_FP8SCOPE_CAPTURE_TRIGGER" },
};

inline constexpr Column kDropped[] = {
    { "timestamp", "INTEGER", R, "ns" },
    { "source", "INTEGER", R, "ENUM_FP8SCOPE_DROP_SOURCE" },
    { "count", "INTEGER", R, "records" },
    { "deviceId", "INTEGER", N, "TARGET_INFO_GPU.id" },
};
} // namespace detail

// The nsys-shaped kernel view, made from the declarations above (schema_view.hpp): each of its columns is read from
// FP8SCOPE_KERNEL (k) or else FP8SCOPE_KERNEL_CONFIG (c) under its own name, but for the two computed here. globalPid
// is the same for every row of a file and lives in FP8SCOPE_META, so the view reads it once instead of storing it per
// kernel.
namespace detail {
inline constexpr view::Source kKernelViewSources[] = {
    { table::kFp8Kernel, "k", kKernel, {} },
    { table::kKernelConfig, "c", kKernelConfig, "c.id = k.configId" },
};
inline constexpr view::Computed kKernelViewComputed[] = {
    { "end", "k.start + k.duration" },
    { "globalPid", "(SELECT value FROM FP8SCOPE_META WHERE key = 'global_pid')" },
};
inline constexpr view::Definition kKernelViewDefinition { kKernelView, kKernelViewSources, kKernelViewComputed };
} // namespace detail
inline constexpr std::string_view kKernelViewSelect = view::SelectText<detail::kKernelViewDefinition>::kText;

// One declaration per table: its name, its columns above, what follows them (a primary key, or a view's SELECT),
// and for a table added after 1.0 the first minor version whose every trace has it. The writer binds, and the loader
// reads, a table's rows through its declaration (schema_table.hpp).
namespace tables {
inline constexpr Table kStringIds { table::kStringIds, detail::kStringIds, "PRIMARY KEY (id)" };
inline constexpr Table kMeta { table::kMeta, detail::kMeta, "PRIMARY KEY (key)" };
inline constexpr Table kSessionStart { table::kSessionStart, detail::kSessionStart, "" };
inline constexpr Table kTargetInfoGpu { table::kTargetInfoGpu, detail::kTargetInfoGpu, "PRIMARY KEY (id)" };
inline constexpr Table kThreadNames { table::kThreadNames, detail::kThreadNames, "" };
inline constexpr Table kKernelConfig { table::kKernelConfig, detail::kKernelConfig, "PRIMARY KEY (id)" };
inline constexpr Table kFp8Kernel { table::kFp8Kernel, detail::kKernel, "PRIMARY KEY (id)" };
inline constexpr Table kKernel { table::kKernel, detail::kKernelView, kKernelViewSelect, TableKind::View };
inline constexpr Table kKernelLatency { table::kKernelLatency, detail::kKernelLatency, "PRIMARY KEY (kernelId)" };
inline constexpr Table kRuntime { table::kRuntime, detail::kRuntime, "" };
inline constexpr Table kSynchronization { table::kSynchronization, detail::kSynchronization, "" };
inline constexpr Table kMemcpy { table::kMemcpy, detail::kMemcpy, "" };
inline constexpr Table kMemset { table::kMemset, detail::kMemset, "" };
inline constexpr Table kNvtxEvents { table::kNvtxEvents, detail::kNvtxEvents, "" };
inline constexpr Table kTensorSite { table::kTensorSite, detail::kTensorSite, "PRIMARY KEY (id)" };
inline constexpr Table kTensorStats { table::kTensorStats, detail::kTensorStats, "PRIMARY KEY (id)" };
inline constexpr Table kScalar { table::kScalar, detail::kScalar, "" };
inline constexpr Table kStepMarker { table::kStepMarker, detail::kStepMarker, "" };
inline constexpr Table kOverhead { table::kOverhead, detail::kOverhead, "" };
inline constexpr Table kDropped { table::kDropped, detail::kDropped, "" };
inline constexpr Table kCollectorWork { table::kCollectorWork, detail::kCollectorWork, "", TableKind::Table, 1 };
// Added in 1.2, but 1.2 was first written (commit fa44e89, row counts) without it: only 1.3 traces all have it.
// samples/traces/compat/schema-1.2-fa44e89.sqlite is such a trace.
inline constexpr Table kCaptureWindow { table::kCaptureWindow, detail::kCaptureWindow, "PRIMARY KEY (id)",
    TableKind::Table, 3 };
inline constexpr Table kScalarNan { table::kScalarNan, detail::kScalarNan, "", TableKind::Table, 4 };
inline constexpr Table kBlockStats { table::kBlockStats, detail::kBlockStats, "PRIMARY KEY (id)", TableKind::Table, 6 };
// The shape of every ENUM_* table (schema_enums.hpp), each created under its own name.
inline constexpr Table kEnum { "ENUM_*", detail::kEnum, "PRIMARY KEY (id)" };
} // namespace tables

// Every table and view of a version-1 trace, in creation order. A trace written by fp8scope has all of them,
// even when empty.
inline constexpr Table kTables[] = { tables::kStringIds, tables::kMeta, tables::kSessionStart, tables::kTargetInfoGpu,
    tables::kThreadNames, tables::kKernelConfig, tables::kFp8Kernel, tables::kKernel, tables::kKernelLatency,
    tables::kRuntime, tables::kSynchronization, tables::kMemcpy, tables::kMemset, tables::kNvtxEvents,
    tables::kTensorSite, tables::kTensorStats, tables::kScalar, tables::kStepMarker, tables::kOverhead,
    tables::kDropped, tables::kCollectorWork, tables::kCaptureWindow, tables::kScalarNan, tables::kBlockStats };

// The position of a declared table in kTables: the writer keeps one prepared INSERT per position.
consteval size_t table_index(const Table& table)
{
    for (size_t i = 0; i < std::size(kTables); ++i)
        if (kTables[i].name == table.name)
            return i;
    throw "the table is not in kTables"; // not a constant expression: the call does not compile
}

// Indexes for the joins that SQL users and the analyzer make, created when recording ends (building them
// during recording would slow every insert). Kernel, memcpy, memset and sync rows join to API calls through
// the runtime table's correlationId; tensor and block statistics are read per site and step.
struct Index {
    std::string_view name;
    std::string_view table;
    std::string_view columns;
};
inline constexpr Index kIndexes[] = {
    { "FP8SCOPE_IDX_RUNTIME_CORRELATION", table::kRuntime, "correlationId" },
    { "FP8SCOPE_IDX_TENSOR_STATS_SITE", table::kTensorStats, "siteId, step" },
    { "FP8SCOPE_IDX_BLOCK_STATS_SITE", table::kBlockStats, "siteId, step" },
};

const Table* find_table(std::string_view name);

// SQL type a column is declared with in the file: sql_type, except ANY, which is declared without a type (BLOB
// affinity, values kept as given). PRAGMA table_info reports this, not sql_type.
std::string_view declared_type(const Column& column);
// CREATE TABLE or CREATE VIEW text for a table of kTables, generated from its constant column list: quoted
// names, declared_type(), NOT NULL for required columns, then `extra`.
std::string create_sql(const Table& table);

namespace meta {
// The tables whose rows a finished trace counts.
inline constexpr bool counts_rows(const Table& t)
{
    return t.kind == TableKind::Table && t.name != table::kMeta;
}
} // namespace meta

} // namespace fp8scope::schema
