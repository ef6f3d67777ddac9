// Lookups over the constant schema of schema.hpp, the ENUM_* table contents and the DDL generated from the
// column lists.
#include "fp8scope/format/schema.hpp"

#include <algorithm>

namespace fp8scope::schema {

namespace {

// Names follow the nsys export's ENUM_* tables (shared/reference/nsys_cupti.md §1.5) in their short form
// ("CONTEXT_SYNCHRONIZE"); labels are for people.
constexpr EnumValue kEventClass[] = {
    { 0, "CUDA_RUNTIME", "CUDA Runtime API" },
    { 1, "CUDA_DRIVER", "CUDA Driver API" },
};

// CUpti_ActivityMemcpyKind, which nsys also uses for 0-10.
constexpr EnumValue kMemcpyOper[] = {
    { 0, "UNKNOWN", "Unknown" },
    { 1, "HTOD", "Host-to-Device" },
    { 2, "DTOH", "Device-to-Host" },
    { 3, "HTOA", "Host-to-Array" },
    { 4, "ATOH", "Array-to-Host" },
    { 5, "ATOA", "Array-to-Array" },
    { 6, "ATOD", "Array-to-Device" },
    { 7, "DTOA", "Device-to-Array" },
    { 8, "DTOD", "Device-to-Device" },
    { 9, "HTOH", "Host-to-Host" },
    { 10, "PTOP", "Peer-to-Peer" },
};

// nsys' memory kind: CUPTI's CUpti_ActivityMemoryKind shifted by one, with UNKNOWN last.
constexpr EnumValue kMemKind[] = {
    { 0, "PAGEABLE", "Pageable" },
    { 1, "PINNED", "Pinned" },
    { 2, "DEVICE", "Device" },
    { 3, "ARRAY", "Array" },
    { 4, "MANAGED", "Managed" },
    { 5, "DEVICE_STATIC", "Device static" },
    { 6, "MANAGED_STATIC", "Managed static" },
    { 7, "UNKNOWN", "Unknown" },
};

// CUpti_ActivitySynchronizationType.
constexpr EnumValue kSyncType[] = {
    { 0, "UNKNOWN", "Unknown" },
    { 1, "EVENT_SYNCHRONIZE", "Event synchronize" },
    { 2, "STREAM_WAIT_EVENT", "Stream wait event" },
    { 3, "STREAM_SYNCHRONIZE", "Stream synchronize" },
    { 4, "CONTEXT_SYNCHRONIZE", "Context synchronize" },
};

// nsys ENUM_NSYS_EVENT_TYPE, the values used by NVTX rows.
constexpr EnumValue kNvtxEventType[] = {
    { 34, "NVTX_MARK", "NVTX mark" },
    { 59, "NVTX_PUSHPOP_RANGE", "NVTX push/pop range" },
    { 60, "NVTX_STARTEND_RANGE", "NVTX start/end range" },
};

// CUpti_ActivityLaunchType.
constexpr EnumValue kLaunchType[] = {
    { 0, "REGULAR", "Regular" },
    { 1, "COOPERATIVE_SINGLE_DEVICE", "Cooperative single device" },
    { 2, "COOPERATIVE_MULTI_DEVICE", "Cooperative multi device" },
};

constexpr EnumValue kDtype[] = {
    { 0, "FLOAT32", "FP32" },
    { 1, "BFLOAT16", "BF16" },
    { 2, "FLOAT16", "FP16" },
    { 3, "E4M3", "FP8 E4M3" },
    { 4, "E5M2", "FP8 E5M2" },
};

constexpr EnumValue kFp8Format[] = {
    { 0, "NONE", "Not cast to FP8" },
    { 1, "E4M3", "FP8 E4M3" },
    { 2, "E5M2", "FP8 E5M2" },
};

constexpr EnumValue kTensorRole[] = {
    { 0, "A", "GEMM operand A" },
    { 1, "B", "GEMM operand B" },
    { 2, "D", "GEMM output D" },
    { 3, "INPUT", "Input" },
    { 4, "WEIGHT", "Weight" },
    { 5, "OUTPUT", "Output" },
    { 6, "GRADIENT", "Gradient" },
    { 7, "OTHER", "Other" },
};

constexpr EnumValue kStatsSource[] = {
    { 0, "GEMM_INTERCEPTION", "cuBLASLt GEMM interception" },
    { 1, "EXPLICIT_PROBE", "Explicit probe call" },
    { 2, "ANNOTATE", "Annotation" },
    { 3, "TORCH_SCALED_MM", "PyTorch _scaled_mm interception (a GEMM no cuBLASLt interception saw)" },
};

constexpr EnumValue kScaleRecipe[] = {
    { 0, "TENSORWISE", "One scale for the tensor" },
    { 1, "ROWWISE", "One scale per row (cuBLASLt outer vector)" },
    { 2, "BLOCKWISE_1X128", "One scale per 1x128 block" },
    { 3, "BLOCKWISE_128X128", "One scale per 128x128 block" },
    { 4, "MX_32", "One E8M0 scale per 32 elements (MXFP8)" },
    { 5, "NVFP4_16", "One E4M3 scale per 16 elements (NVFP4)" },
};

constexpr EnumValue kOverheadKind[] = {
    { 0, "CUPTI_BUFFER_FLUSH", "CUPTI buffer flush" },
    { 1, "CUPTI_INSTRUMENTATION", "CUPTI instrumentation" },
    { 2, "CUPTI_RESOURCE", "CUPTI resource" },
    { 3, "DRIVER_COMPILER", "Driver compiler" },
    { 4, "COMMAND_BUFFER_FULL", "Command buffer full" },
    { 5, "WRITER_COMMIT", "Writer commit" },
    { 6, "WRITER_DECODE", "Writer decode" },
    { 7, "OTHER", "Other" },
};

constexpr EnumValue kDropSource[] = {
    { 0, "CUPTI_NO_BUFFER", "CUPTI had no buffer" },
    { 1, "BUFFER_POOL_EXHAUSTED", "Buffer pool exhausted" },
    { 2, "WRITER_QUEUE_FULL", "Writer queue full" },
    { 3, "WRITER_ERROR", "Writer error" },
    { 4, "TENSOR_STATS_CAP", "Tensor statistics cap reached (older traces; now meta tensor_stats_skipped)" },
    { 5, "TENSOR_STATS_LOST", "Tensor statistics samples lost" },
    { 6, "CAPTURE_DETACH", "Records CUPTI handed over while detaching between capture windows" },
};

constexpr EnumValue kCaptureTrigger[] = {
    { 0, "STEPS", "Steps A..B (--capture-steps)" },
    { 1, "PERIODIC", "K steps of every N (--capture-every, --capture-length)" },
    { 2, "PROFILER_API", "cudaProfilerStart/Stop (--capture-range cudaProfilerApi)" },
    { 3, "TIME", "Time from the collector's start (--delay, --duration)" },
};

constexpr EnumValue kStepMarkerSource[] = {
    { 0, "JOB", "The job marked a step's beginning (fp8scope.step())" },
    { 1, "OPTIMIZER", "An optimizer step ended (the Python package's optimizer hook)" },
    { 2, "OPTIMIZER_SKIPPED", "GradScaler skipped the optimizer step (inf or NaN gradients)" },
};

constexpr Enum kEnums[] = {
    { "ENUM_NSYS_EVENT_CLASS", kEventClass },
    { "ENUM_CUDA_MEMCPY_OPER", kMemcpyOper },
    { "ENUM_CUDA_MEM_KIND", kMemKind },
    { "ENUM_CUPTI_SYNC_TYPE", kSyncType },
    { "ENUM_NSYS_EVENT_TYPE", kNvtxEventType },
    { "ENUM_CUPTI_KERNEL_LAUNCH_TYPE", kLaunchType },
    { "ENUM_FP8SCOPE_DTYPE", kDtype },
    { "ENUM_FP8SCOPE_FP8_FORMAT", kFp8Format },
    { "ENUM_FP8SCOPE_TENSOR_ROLE", kTensorRole },
    { "ENUM_FP8SCOPE_STATS_SOURCE", kStatsSource },
    { "ENUM_FP8SCOPE_SCALE_RECIPE", kScaleRecipe },
    { "ENUM_FP8SCOPE_OVERHEAD_KIND", kOverheadKind },
    { "ENUM_FP8SCOPE_DROP_SOURCE", kDropSource },
    { "ENUM_FP8SCOPE_CAPTURE_TRIGGER", kCaptureTrigger },
    { "ENUM_FP8SCOPE_STEP_MARKER_SOURCE", kStepMarkerSource },
};

// nanColumns' bit i is the i-th REAL column of FP8SCOPE_TENSOR_STATS: the list that names the bits must follow them.
constexpr bool nan_bits_follow_real_columns()
{
    size_t bit = 0;
    for (const Column& column : detail::kTensorStats) {
        if (column.sql_type != "REAL")
            continue;
        if (bit >= std::size(detail::kTensorStatsNanColumns) || detail::kTensorStatsNanColumns[bit] != column.name)
            return false;
        ++bit;
    }
    return bit == std::size(detail::kTensorStatsNanColumns);
}
static_assert(nan_bits_follow_real_columns());

void append_quoted(std::string& out, std::string_view identifier)
{
    // Identifiers come from the constants above, never from data; quoting keeps names such as "end", "key"
    // and "rows" valid whatever SQLite counts as a keyword.
    out += '"';
    out += identifier;
    out += '"';
}

} // namespace

const Table* find_table(std::string_view name)
{
    const auto it = std::ranges::find(kTables, name, &Table::name);
    return it == std::end(kTables) ? nullptr : &*it;
}

std::span<const Enum> enums()
{
    return kEnums;
}

std::string_view enum_name(std::string_view enum_table, int32_t id)
{
    const auto e = std::ranges::find(kEnums, enum_table, &Enum::table);
    if (e == std::end(kEnums))
        return {};
    const auto v = std::ranges::find(e->values, id, &EnumValue::id);
    return v == e->values.end() ? std::string_view {} : v->name;
}

std::string_view declared_type(const Column& column)
{
    // A column of type ANY is declared without a type: that gives it BLOB affinity, so SQLite stores values
    // as given. Declared "ANY" in a non-STRICT table would get NUMERIC affinity and turn the text "1.0" into
    // the real 1.0 (sqlite.org/datatype3.html §3.1).
    return column.sql_type == "ANY" ? std::string_view {} : column.sql_type;
}

std::string create_sql(const Table& table)
{
    std::string sql;
    if (table.kind == TableKind::View) {
        sql = "CREATE VIEW ";
        append_quoted(sql, table.name);
        sql += " AS ";
        sql += table.extra;
        return sql;
    }
    sql = "CREATE TABLE ";
    append_quoted(sql, table.name);
    sql += " (";
    for (size_t i = 0; i < table.columns.size(); ++i) {
        const Column& column = table.columns[i];
        if (i > 0)
            sql += ", ";
        append_quoted(sql, column.name);
        if (const auto type = declared_type(column); !type.empty()) {
            sql += ' ';
            sql += type;
        }
        if (!column.nullable)
            sql += " NOT NULL";
    }
    if (!table.extra.empty()) {
        sql += ", ";
        sql += table.extra;
    }
    sql += ')';
    return sql;
}

std::string create_enum_sql(const Enum& e)
{
    Table table = tables::kEnum;
    table.name = e.table;
    return create_sql(table);
}

} // namespace fp8scope::schema
