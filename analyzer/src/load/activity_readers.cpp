// Tables an fp8scope trace shares with an Nsight Systems export: same names, same columns (schema.hpp, and
// the nsys 3.28.1 schema reference for the export's nullability).
#include "fp8scope/format/schema.hpp"
#include "load/readers.hpp"

#include <array>
#include <span>

namespace fp8scope::analyzer::detail {

namespace {

using Names = std::span<const std::string_view>;

// Columns whose absence makes the table unreadable: for our traces every column the loader reads (the
// full check against schema.hpp happens in read_fp8scope), for nsys only those without which a row means
// nothing.
Names required(const ReadContext& context, Names ours, Names nsight)
{
    return context.nsight() ? nsight : ours;
}

// end < start: "negative duration in TABLE row N".
void check_duration(Columns& row, int64_t start_ns, int64_t end_ns)
{
    if (end_ns < start_ns) [[unlikely]]
        row.fail_row("negative duration");
}

// CUPTI reports CUPTI_SYNCHRONIZATION_INVALID_VALUE (0xFFFFFFFF, cupti_activity.h) as the stream of context
// and event syncs; nsys keeps it in its NOT NULL streamId, our traces store NULL.
uint32_t sync_stream(Columns& row, int index)
{
    if (row.is_null(index))
        return SyncTable::kNoStream;
    const int64_t value = row.integer(index);
    if (value == SyncTable::kNoStream || value == -1)
        return SyncTable::kNoStream;
    return static_cast<uint32_t>(row.in_range(index, value, 0, Columns::kMaxU32));
}

Expected<void> record_count(ReadContext& context, std::string_view table, const Expected<int64_t>& rows)
{
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(table)] = *rows;
    return {};
}

} // namespace

Expected<void> read_api_calls(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kRuntime;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[]
        = { "start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue" };
    constexpr std::string_view kNsightRequired[] = { "start", "end", "nameId" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    ApiTable& t = context.model.api_calls;
    auto reserved = reserve_rows(
        context, kTable, t.start_ns, t.end_ns, t.global_tid, t.correlation_id, t.name, t.is_driver, t.return_value);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    const auto& strings = context.strings;
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const int64_t start_ns = row.time(ix[0]);
        const int64_t end_ns = row.time(ix[1]);
        check_duration(row, start_ns, end_ns);
        const int32_t event_class = lenient ? row.int32_or(ix[2], 0) : row.int32(ix[2]);
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.is_driver.push_back(event_class == static_cast<int32_t>(schema::EventClass::CudaDriver) ? 1 : 0);
        t.global_tid.push_back(lenient ? row.integer_or(ix[3], 0) : row.integer(ix[3]));
        t.correlation_id.push_back(lenient ? row.id32_or(ix[4], 0) : row.id32(ix[4]));
        t.name.push_back(string_ref(row, ix[5], strings));
        t.return_value.push_back(lenient ? row.int32_or(ix[6], 0) : row.int32(ix[6]));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_syncs(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kSynchronization;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[] = { "start", "end", "deviceId", "streamId", "correlationId", "syncType" };
    constexpr std::string_view kNsightRequired[] = { "start", "end", "deviceId", "syncType" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    SyncTable& t = context.model.syncs;
    auto reserved
        = reserve_rows(context, kTable, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, t.sync_type);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const int64_t start_ns = row.time(ix[0]);
        const int64_t end_ns = row.time(ix[1]);
        check_duration(row, start_ns, end_ns);
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.device_id.push_back(row.id32(ix[2]));
        t.stream_id.push_back(sync_stream(row, ix[3]));
        t.correlation_id.push_back(lenient ? row.id32_or(ix[4], 0) : row.id32(ix[4]));
        t.sync_type.push_back(row.int32(ix[5]));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_memcpys(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kMemcpy;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[]
        = { "start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind", "srcKind", "dstKind" };
    constexpr std::string_view kNsightRequired[] = { "start", "end", "deviceId", "streamId", "bytes", "copyKind" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    MemcpyTable& t = context.model.memcpys;
    auto reserved = reserve_rows(context, kTable, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id,
        t.bytes, t.copy_kind, t.src_kind, t.dst_kind);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    constexpr auto kUnknownMemory = static_cast<int32_t>(schema::MemoryKind::Unknown);
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const int64_t start_ns = row.time(ix[0]);
        const int64_t end_ns = row.time(ix[1]);
        check_duration(row, start_ns, end_ns);
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.device_id.push_back(row.id32(ix[2]));
        t.stream_id.push_back(row.id32(ix[3]));
        t.correlation_id.push_back(lenient ? row.id32_or(ix[4], 0) : row.id32(ix[4]));
        t.bytes.push_back(static_cast<uint64_t>(row.count(ix[5])));
        t.copy_kind.push_back(row.int32(ix[6]));
        t.src_kind.push_back(lenient ? row.int32_or(ix[7], kUnknownMemory) : row.int32(ix[7]));
        t.dst_kind.push_back(lenient ? row.int32_or(ix[8], kUnknownMemory) : row.int32(ix[8]));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_memsets(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kMemset;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[]
        = { "start", "end", "deviceId", "streamId", "correlationId", "bytes", "memKind" };
    constexpr std::string_view kNsightRequired[] = { "start", "end", "deviceId", "streamId", "bytes" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    MemsetTable& t = context.model.memsets;
    auto reserved = reserve_rows(
        context, kTable, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, t.bytes, t.mem_kind);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    constexpr auto kUnknownMemory = static_cast<int32_t>(schema::MemoryKind::Unknown);
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const int64_t start_ns = row.time(ix[0]);
        const int64_t end_ns = row.time(ix[1]);
        check_duration(row, start_ns, end_ns);
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.device_id.push_back(row.id32(ix[2]));
        t.stream_id.push_back(row.id32(ix[3]));
        t.correlation_id.push_back(lenient ? row.id32_or(ix[4], 0) : row.id32(ix[4]));
        t.bytes.push_back(static_cast<uint64_t>(row.count(ix[5])));
        t.mem_kind.push_back(lenient ? row.int32_or(ix[6], kUnknownMemory) : row.int32(ix[6]));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_nvtx(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kNvtxEvents;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[] = { "start", "end", "eventType", "text", "textId", "globalTid" };
    constexpr std::string_view kNsightRequired[] = { "start", "end", "eventType" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    NvtxTable& t = context.model.nvtx;
    auto reserved = reserve_rows(context, kTable, t.start_ns, t.end_ns, t.event_type, t.text, t.global_tid);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    auto& strings = context.strings;
    auto& table = context.model.strings;
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const int32_t event_type = row.int32(ix[2]);
        // nsys also keeps domain, category and thread-naming events in NVTX_EVENTS (ENUM_NSYS_EVENT_TYPE); only
        // marks and ranges are activity.
        if (lenient && event_type != static_cast<int32_t>(schema::NvtxEventType::Mark)
            && event_type != static_cast<int32_t>(schema::NvtxEventType::PushPopRange)
            && event_type != static_cast<int32_t>(schema::NvtxEventType::StartEndRange))
            return;
        const int64_t start_ns = row.time(ix[0]);
        int64_t end_ns = NvtxTable::kNoEnd;
        if (!row.is_null(ix[1])) {
            end_ns = row.integer(ix[1]);
            // Some nsys versions write -1 for the end of marks and of ranges never closed.
            if (end_ns == -1 && start_ns > -1) {
                end_ns = NvtxTable::kNoEnd;
            } else {
                end_ns = row.checked_time(ix[1], end_ns);
                check_duration(row, start_ns, end_ns);
            }
        }
        StringRef text;
        if (!row.is_null(ix[4]))
            text = string_ref(row, ix[4], strings); // registered string (nvtxDomainRegisterString)
        else
            text = strings.intern(table, row.optional_text(ix[3]).value_or(std::string_view {}));
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.event_type.push_back(event_type);
        t.text.push_back(text);
        t.global_tid.push_back(lenient ? row.integer_or(ix[5], 0) : row.integer(ix[5]));
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_thread_names(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kThreadNames;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[] = { "nameId", "globalTid" };
    auto plan = plan_columns(context.file, kTable, kWanted, kWanted);
    if (!plan)
        return std::unexpected(plan.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    auto& names = context.model.thread_names;
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        const StringRef name = string_ref(row, ix[0], context.strings);
        names.push_back(ThreadName { lenient ? row.integer_or(ix[1], 0) : row.integer(ix[1]), name });
    });
    return record_count(context, kTable, rows);
}

Expected<void> read_gpus(ReadContext& context)
{
    constexpr std::string_view kTable = schema::table::kTargetInfoGpu;
    if (!context.file.has_table(kTable))
        return {};
    constexpr std::string_view kWanted[] = { "id", "name", "busLocation", "totalMemory", "memoryBandwidth", "clockRate",
        "smCount", "uuid", "chipName", "computeMajor", "computeMinor" };
    constexpr std::string_view kNsightRequired[] = { "id" };
    auto plan = plan_columns(context.file, kTable, kWanted, required(context, kWanted, kNsightRequired));
    if (!plan)
        return std::unexpected(plan.error());
    const auto& ix = plan->index;
    const bool lenient = context.nsight();
    auto text = [&](Columns& row, int index) {
        return valid_utf8(lenient ? row.optional_text(index).value_or(std::string_view {}) : row.text(index));
    };
    auto integer = [&](Columns& row, int index) { return lenient ? row.integer_or(index, 0) : row.integer(index); };
    auto int32 = [&](Columns& row, int index) { return lenient ? row.int32_or(index, 0) : row.int32(index); };
    auto rows = for_each_row(context.file, kTable, plan->select, [&](Columns& row) {
        GpuInfo gpu;
        gpu.id = row.int32(ix[0]);
        gpu.name = text(row, ix[1]);
        gpu.bus_location = text(row, ix[2]);
        gpu.total_memory_bytes = integer(row, ix[3]);
        gpu.memory_bandwidth_bytes_per_s = integer(row, ix[4]);
        gpu.clock_rate_hz = integer(row, ix[5]);
        gpu.sm_count = int32(row, ix[6]);
        gpu.uuid = text(row, ix[7]);
        gpu.chip_name = text(row, ix[8]);
        gpu.compute_major = int32(row, ix[9]);
        gpu.compute_minor = int32(row, ix[10]);
        context.model.gpus.push_back(std::move(gpu));
    });
    return record_count(context, kTable, rows);
}

} // namespace fp8scope::analyzer::detail
