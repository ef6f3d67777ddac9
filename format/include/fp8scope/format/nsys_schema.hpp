// The tables of an Nsight Systems SQLite export (`nsys export --type sqlite`) that fp8scope reads, declared as
// schema_table.hpp declares ours: the loader's nsys reader names their columns (ColumnOf), and the scenario builder's
// nsys writer (tests/support/scenario/scenario_nsight.cpp) creates and fills them from these declarations.
//
// The tables our traces share with the export are not listed again: each is made, when compiled, from our declaration
// (schema.hpp, the kernel from our CUPTI_ACTIVITY_KIND_KERNEL view) and what the export adds to it, its own columns,
// each placed after the column it follows there, and the columns it declares NOT NULL. A column added to one of our
// shared tables is then a column of the export's table too, and every name given here that the table lacks does not
// compile. Source: the Nsight Systems AnalysisGuide "SQLite Schema Reference" (sqlite-schema-reference.rst), export
// schema 3.28.1, nsys 2026.4, whose column order this follows but in CUPTI_ACTIVITY_KIND_MEMSET, where nsys puts
// graphNodeId before memKind and ours after it (every reader reads by name: the order matters to none).
#pragma once

#include "fp8scope/format/schema.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace fp8scope::schema::nsys {

// A column the export has and our table lacks, placed after the column it follows: by default the entry before it in
// its list, the column named in `after` when given, or before every other column when `after` is kFirst.
struct AddedColumn {
    std::string_view name;
    std::string_view after = {};
    std::string_view sql_type = "INTEGER";
};
inline constexpr std::string_view kFirst = "(first)";

// How the export declares a table that ours shares: our columns, its own (`added`), and which of them all it declares
// NOT NULL (`required`; the others are nullable there, whatever ours says).
struct Extension {
    const Table& ours;
    std::span<const AddedColumn> added;
    std::span<const std::string_view> required;
};

namespace detail {

consteval bool names_a_column(const Extension& e, std::string_view name)
{
    for (const Column& column : e.ours.columns)
        if (column.name == name)
            return true;
    for (const AddedColumn& column : e.added)
        if (column.name == name)
            return true;
    return false;
}

consteval bool is_required(const Extension& e, std::string_view name)
{
    for (std::string_view required : e.required)
        if (required == name)
            return true;
    return false;
}

// The column each added column follows (AddedColumn's rule applied), at the added column's position.
template <size_t M> consteval std::array<std::string_view, M> anchors_of(const Extension& e)
{
    std::array<std::string_view, M> anchors {};
    for (size_t i = 0; i < M; ++i) {
        const AddedColumn& added = e.added[i];
        if (!added.after.empty())
            anchors[i] = added.after;
        else if (i > 0)
            anchors[i] = e.added[i - 1].name;
        else
            throw "the first added column names the column it follows"; // not a constant expression: does not compile
        if (anchors[i] != kFirst && !names_a_column(e, anchors[i]))
            throw "an added column follows a column the table lacks"; // not a constant expression: does not compile
    }
    return anchors;
}

// Appends `column` at `out[next++]`, then the added columns that follow it, each with theirs.
template <size_t N, size_t M>
consteval void place(const Extension& e, const std::array<std::string_view, M>& anchors, std::array<Column, N>& out,
    size_t& next, Column column)
{
    column.nullable = !is_required(e, column.name);
    column.since_minor = 0;
    out[next++] = column;
    for (size_t i = 0; i < M; ++i)
        if (anchors[i] == column.name)
            place(e, anchors, out, next, Column { e.added[i].name, e.added[i].sql_type, true, "", 0 });
}

// The export's columns: our columns in our order with each added column after the one it follows.
template <size_t N, size_t M> consteval std::array<Column, N> columns_of(const Extension& e)
{
    for (std::string_view required : e.required)
        if (!names_a_column(e, required))
            throw "a NOT NULL column the table lacks"; // not a constant expression: does not compile
    for (const AddedColumn& added : e.added)
        for (const Column& column : e.ours.columns)
            if (added.name == column.name)
                throw "an added column has the name of one of ours"; // not a constant expression: does not compile
    const auto anchors = anchors_of<M>(e);
    std::array<Column, N> out {};
    size_t next = 0;
    for (size_t i = 0; i < M; ++i)
        if (anchors[i] == kFirst)
            place(e, anchors, out, next, Column { e.added[i].name, e.added[i].sql_type, true, "", 0 });
    for (const Column& column : e.ours.columns)
        place(e, anchors, out, next, column);
    if (next != N)
        throw "an added column follows one never placed"; // not a constant expression: does not compile
    return out;
}

template <const Extension& E>
inline constexpr auto kColumns = columns_of<E.ours.columns.size() + E.added.size(), E.added.size()>(E);

using A = AddedColumn;

inline constexpr A kGpuActivityAdded[] = { { "greenContextId", "contextId" } };

inline constexpr A kKernelAdded[] = { { "greenContextId", "contextId" }, { "cacheConfig", "launchType" },
    { "gridId", "localMemoryTotal" }, { "sharedMemoryLimitConfig", "graphNodeId" }, { "qmdBulkReleaseDone" },
    { "qmdPreexitDone" }, { "qmdLastCtaDone" }, { "clusterSchedulingPolicy", "clusterZ" },
    { "maxPotentialClusterSize" }, { "maxActiveClusters" }, { "sharedMemoryRequestedPercentage" },
    { .name = "tensorSizeMinusOneElements", .sql_type = "TEXT" } };
inline constexpr std::string_view kKernelRequired[]
    = { "start", "end", "deviceId", "contextId", "streamId", "demangledName", "shortName", "registersPerThread",
          "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
          "localMemoryPerThread", "localMemoryTotal", "gridId", "tensorSizeMinusOneElements" };

inline constexpr A kMemcpyAdded[] = { { "greenContextId", "contextId" }, { "deprecatedSrcId", "copyKind" },
    { "srcContextId", "srcDeviceId" }, { "dstContextId", "dstDeviceId" }, { "migrationCause" },
    { "virtualAddress", "graphNodeId" }, { "copyCount" } };
inline constexpr std::string_view kMemcpyRequired[]
    = { "start", "end", "deviceId", "contextId", "streamId", "bytes", "copyKind" };

inline constexpr std::string_view kMemsetRequired[]
    = { "start", "end", "deviceId", "contextId", "streamId", "value", "bytes" };

inline constexpr A kSyncAdded[] = { { "greenContextId", "contextId" }, { "deprecatedSyncType", "globalPid" } };
// CUPTI_SYNCHRONIZATION_INVALID_VALUE stands in a NOT NULL streamId or eventId that a sync lacks.
inline constexpr std::string_view kSyncRequired[]
    = { "start", "end", "deviceId", "contextId", "streamId", "syncType", "eventId" };

inline constexpr A kRuntimeAdded[] = { { "callchainId", "returnValue" } };
inline constexpr std::string_view kRuntimeRequired[] = { "start", "end", "eventClass", "nameId", "returnValue" };

inline constexpr A kNvtxAdded[]
    = { { "uint64Value", "domainId" }, { "int64Value" }, { .name = "doubleValue", .sql_type = "REAL" },
          { "uint32Value" }, { "int32Value" }, { .name = "floatValue", .sql_type = "REAL" }, { "jsonTextId" },
          { .name = "jsonText", .sql_type = "TEXT" }, { .name = "binaryData", .sql_type = "TEXT" }, { "eventId" } };
inline constexpr std::string_view kNvtxRequired[] = { "start", "eventType", "eventId" };

// What nsys reports of a device beside what our TARGET_INFO_GPU keeps, in its order.
inline constexpr A kGpuAdded[] = { { "vmId", kFirst }, { "isDiscrete", "busLocation" }, { "l2CacheSize" },
    { "pwGpuId", "smCount" }, { "luid", "uuid" }, { "cuDevice", "chipName" },
    { .name = "ctxswDevPath", .sql_type = "TEXT" }, { .name = "ctrlDevPath", .sql_type = "TEXT" }, { "revision" },
    { "nodeMask" }, { "constantMemory" }, { "maxIPC" }, { "maxRegistersPerBlock" }, { "maxShmemPerBlock" },
    { "maxShmemPerBlockOptin" }, { "maxShmemPerSm" }, { "maxRegistersPerSm" }, { "threadsPerWarp" }, { "asyncEngines" },
    { "maxWarpsPerSm" }, { "maxBlocksPerSm" }, { "maxThreadsPerBlock" }, { "maxBlockDimX" }, { "maxBlockDimY" },
    { "maxBlockDimZ" }, { "maxGridDimX" }, { "maxGridDimY" }, { "maxGridDimZ" }, { "smMajor", "computeMinor" },
    { "smMinor" }, { "numaNodeId" } };

inline constexpr A kSessionStartAdded[] = { { "systemClockNs", "localTime" }, { "sessionStartCntVctNs" } };
inline constexpr std::string_view kIdRequired[] = { "id" };
inline constexpr std::string_view kStringIdsRequired[] = { "id", "value" };
inline constexpr std::string_view kThreadNamesRequired[] = { "nameId" };
inline constexpr std::string_view kGpuRequired[] = { "vmId", "id" };

inline constexpr Extension kStringIds { schema::tables::kStringIds, {}, kStringIdsRequired };
inline constexpr Extension kThreadNames { schema::tables::kThreadNames, {}, kThreadNamesRequired };
inline constexpr Extension kSessionStart { schema::tables::kSessionStart, kSessionStartAdded, {} };
inline constexpr Extension kTargetInfoGpu { schema::tables::kTargetInfoGpu, kGpuAdded, kGpuRequired };
inline constexpr Extension kEnum { schema::tables::kEnum, {}, kIdRequired };
inline constexpr Extension kKernel { schema::tables::kKernel, kKernelAdded, kKernelRequired };
inline constexpr Extension kMemcpy { schema::tables::kMemcpy, kMemcpyAdded, kMemcpyRequired };
inline constexpr Extension kMemset { schema::tables::kMemset, kGpuActivityAdded, kMemsetRequired };
inline constexpr Extension kSynchronization { schema::tables::kSynchronization, kSyncAdded, kSyncRequired };
inline constexpr Extension kRuntime { schema::tables::kRuntime, kRuntimeAdded, kRuntimeRequired };
inline constexpr Extension kNvtxEvents { schema::tables::kNvtxEvents, kNvtxAdded, kNvtxRequired };

// The export's own tables, which ours do not share.
inline constexpr Column kMetaDataExport[] = {
    { "name", "TEXT", false, "text", 0 },
    { "value", "TEXT", true, "text", 0 },
};
inline constexpr Column kSystemEnv[] = {
    { "globalVid", "INTEGER", true, "id", 0 },
    { "devStateName", "TEXT", false, "text", 0 },
    { "name", "TEXT", false, "text", 0 },
    { "nameEnum", "INTEGER", false, "id", 0 },
    { "value", "TEXT", false, "text", 0 },
};

} // namespace detail

// The export's tables as it declares them. Its ENUM_* tables all have kEnum's shape, each under its own name;
// nsys names the kernel launch type's table after CUDA (kLaunchTypeEnum), ours after CUPTI.
namespace tables {
using detail::kColumns;
inline constexpr Table kMetaDataExport { "META_DATA_EXPORT", detail::kMetaDataExport, "" };
inline constexpr Table kSystemEnv { "TARGET_INFO_SYSTEM_ENV", detail::kSystemEnv, "" };
inline constexpr Table kStringIds { table::kStringIds, kColumns<detail::kStringIds>, "PRIMARY KEY (id)" };
inline constexpr Table kThreadNames { table::kThreadNames, kColumns<detail::kThreadNames>, "" };
inline constexpr Table kSessionStart { table::kSessionStart, kColumns<detail::kSessionStart>, "" };
inline constexpr Table kTargetInfoGpu { table::kTargetInfoGpu, kColumns<detail::kTargetInfoGpu>, "" };
inline constexpr Table kEnum { "ENUM_*", kColumns<detail::kEnum>, "PRIMARY KEY (id)" };
inline constexpr Table kKernel { table::kKernel, kColumns<detail::kKernel>, "" };
inline constexpr Table kMemcpy { table::kMemcpy, kColumns<detail::kMemcpy>, "" };
inline constexpr Table kMemset { table::kMemset, kColumns<detail::kMemset>, "" };
inline constexpr Table kSynchronization { table::kSynchronization, kColumns<detail::kSynchronization>, "" };
inline constexpr Table kRuntime { table::kRuntime, kColumns<detail::kRuntime>, "" };
inline constexpr Table kNvtxEvents { table::kNvtxEvents, kColumns<detail::kNvtxEvents>, "PRIMARY KEY (eventId)" };
} // namespace tables

inline constexpr std::string_view kLaunchTypeEnum = "ENUM_CUDA_KERNEL_LAUNCH_TYPE";

} // namespace fp8scope::schema::nsys
