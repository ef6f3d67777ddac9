// Tables an fp8scope trace shares with an Nsight Systems export: same names, same columns (schema.hpp, and
// the nsys 3.28.1 schema reference for the export's nullability).
#include "fp8scope/format/schema.hpp"
#include "load/readers.hpp"

namespace fp8scope::analyzer::detail {

namespace {

namespace tables = schema::tables;

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

Expected<void> record_count(ReadContext& context, const schema::Table& table, const Expected<int64_t>& rows)
{
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(table.name)] = *rows;
    return {};
}

// A shared table, read alike: its columns checked, its rows reserved in the model's `vectors` (reserve_rows), each row
// handed to on_row, and the count recorded.
template <const schema::Table& T, class OnRow, class... Vectors>
Expected<void> read_table(ReadContext& context, const TableColumns<T>& c, OnRow&& on_row, Vectors&... vectors)
{
    if (auto ok = c.check(); !ok)
        return ok;
    if constexpr (sizeof...(Vectors) > 0) {
        auto reserved = reserve_rows(context, T.name, vectors...);
        if (!reserved)
            return std::unexpected(reserved.error());
    }
    return record_count(context, T, for_each_row(context.file, c, std::forward<OnRow>(on_row)));
}

// The columns every GPU activity row has, read alike: [start, end), device, stream (read by `stream`) and the
// correlation id, which an nsys export may leave NULL (not correlated).
template <const schema::Table& T, class Table, class ReadStream>
void read_gpu_activity(Columns& row, const TableColumns<T>& c, bool lenient, Table& t, ReadStream&& stream)
{
    const int64_t start_ns = row.time(c["start"]);
    const int64_t end_ns = row.time(c["end"]);
    check_duration(row, start_ns, end_ns);
    t.start_ns.push_back(start_ns);
    t.end_ns.push_back(end_ns);
    t.device_id.push_back(row.id32(c["deviceId"]));
    t.stream_id.push_back(stream(row, c["streamId"]));
    const int correlation = c["correlationId"];
    t.correlation_id.push_back(lenient ? row.id32_or(correlation, 0) : row.id32(correlation));
}

uint32_t stream_id(Columns& row, int index)
{
    return row.id32(index);
}

} // namespace

Expected<void> read_api_calls(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kRuntime;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(), EveryColumn {}, { "start", "end", "nameId" });
    ApiTable& t = context.model.api_calls;
    const bool lenient = context.nsight();
    const auto& strings = context.strings;
    const auto on_row = [&](Columns& row) {
        const int64_t start_ns = row.time(c["start"]);
        const int64_t end_ns = row.time(c["end"]);
        check_duration(row, start_ns, end_ns);
        const int event_class = c["eventClass"], global_tid = c["globalTid"], correlation = c["correlationId"];
        const int32_t event_class_id = lenient ? row.int32_or(event_class, 0) : row.int32(event_class);
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.is_driver.push_back(event_class_id == static_cast<int32_t>(schema::EventClass::CudaDriver) ? 1 : 0);
        t.global_tid.push_back(lenient ? row.integer_or(global_tid, 0) : row.integer(global_tid));
        t.correlation_id.push_back(lenient ? row.id32_or(correlation, 0) : row.id32(correlation));
        t.name.push_back(string_ref(row, c["nameId"], strings));
        const int return_value = c["returnValue"];
        t.return_value.push_back(lenient ? row.int32_or(return_value, 0) : row.int32(return_value));
    };
    return read_table(
        context, c, on_row, t.start_ns, t.end_ns, t.global_tid, t.correlation_id, t.name, t.is_driver, t.return_value);
}

Expected<void> read_syncs(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kSynchronization;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(),
        { "start", "end", "deviceId", "streamId", "correlationId", "syncType" },
        { "start", "end", "deviceId", "syncType" });
    SyncTable& t = context.model.syncs;
    const bool lenient = context.nsight();
    const auto on_row = [&](Columns& row) {
        read_gpu_activity(row, c, lenient, t, sync_stream);
        t.sync_type.push_back(row.int32(c["syncType"]));
    };
    return read_table(
        context, c, on_row, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, t.sync_type);
}

Expected<void> read_memcpys(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kMemcpy;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(),
        { "start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind", "srcKind", "dstKind" },
        { "start", "end", "deviceId", "streamId", "bytes", "copyKind" });
    MemcpyTable& t = context.model.memcpys;
    const bool lenient = context.nsight();
    constexpr auto kUnknownMemory = static_cast<int32_t>(schema::MemoryKind::Unknown);
    const auto on_row = [&](Columns& row) {
        read_gpu_activity(row, c, lenient, t, stream_id);
        t.bytes.push_back(static_cast<uint64_t>(row.count(c["bytes"])));
        t.copy_kind.push_back(row.int32(c["copyKind"]));
        const int src = c["srcKind"], dst = c["dstKind"];
        t.src_kind.push_back(lenient ? row.int32_or(src, kUnknownMemory) : row.int32(src));
        t.dst_kind.push_back(lenient ? row.int32_or(dst, kUnknownMemory) : row.int32(dst));
    };
    return read_table(context, c, on_row, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, t.bytes,
        t.copy_kind, t.src_kind, t.dst_kind);
}

Expected<void> read_memsets(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kMemset;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(),
        { "start", "end", "deviceId", "streamId", "correlationId", "bytes", "memKind" },
        { "start", "end", "deviceId", "streamId", "bytes" });
    MemsetTable& t = context.model.memsets;
    const bool lenient = context.nsight();
    constexpr auto kUnknownMemory = static_cast<int32_t>(schema::MemoryKind::Unknown);
    const auto on_row = [&](Columns& row) {
        read_gpu_activity(row, c, lenient, t, stream_id);
        t.bytes.push_back(static_cast<uint64_t>(row.count(c["bytes"])));
        t.mem_kind.push_back(lenient ? row.int32_or(c["memKind"], kUnknownMemory) : row.int32(c["memKind"]));
    };
    return read_table(
        context, c, on_row, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, t.bytes, t.mem_kind);
}

Expected<void> read_nvtx(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kNvtxEvents;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(),
        { "start", "end", "eventType", "text", "textId", "globalTid" }, { "start", "end", "eventType" });
    NvtxTable& t = context.model.nvtx;
    const bool lenient = context.nsight();
    auto& strings = context.strings;
    auto& table = context.model.strings;
    const int end = c["end"], text_id = c["textId"], global_tid = c["globalTid"];
    const auto on_row = [&](Columns& row) {
        const int32_t event_type = row.int32(c["eventType"]);
        // nsys also keeps domain, category and thread-naming events in NVTX_EVENTS (ENUM_NSYS_EVENT_TYPE); only
        // marks and ranges are activity.
        if (lenient && event_type != static_cast<int32_t>(schema::NvtxEventType::Mark)
            && event_type != static_cast<int32_t>(schema::NvtxEventType::PushPopRange)
            && event_type != static_cast<int32_t>(schema::NvtxEventType::StartEndRange))
            return;
        const int64_t start_ns = row.time(c["start"]);
        int64_t end_ns = NvtxTable::kNoEnd;
        if (!row.is_null(end)) {
            end_ns = row.integer(end);
            // Some nsys versions write -1 for the end of marks and of ranges never closed.
            if (end_ns == -1 && start_ns > -1) {
                end_ns = NvtxTable::kNoEnd;
            } else {
                end_ns = row.checked_time(end, end_ns);
                check_duration(row, start_ns, end_ns);
            }
        }
        StringRef text;
        if (!row.is_null(text_id))
            text = string_ref(row, text_id, strings); // registered string (nvtxDomainRegisterString)
        else
            text = strings.intern(table, row.optional_text(c["text"]).value_or(std::string_view {}));
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.event_type.push_back(event_type);
        t.text.push_back(text);
        t.global_tid.push_back(lenient ? row.integer_or(global_tid, 0) : row.integer(global_tid));
    };
    return read_table(context, c, on_row, t.start_ns, t.end_ns, t.event_type, t.text, t.global_tid);
}

Expected<void> read_thread_names(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kThreadNames;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(
        context.file, context.columns_from(), { "nameId", "globalTid" }, { "nameId", "globalTid" });
    const bool lenient = context.nsight();
    const int global_tid = c["globalTid"];
    return read_table(context, c, [&](Columns& row) {
        const StringRef name = string_ref(row, c["nameId"], context.strings);
        context.model.thread_names.push_back(
            ThreadName { lenient ? row.integer_or(global_tid, 0) : row.integer(global_tid), name });
    });
}

Expected<void> read_gpus(ReadContext& context)
{
    constexpr const schema::Table& kTable = tables::kTargetInfoGpu;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, context.columns_from(), EveryColumn {}, { "id" });
    const bool lenient = context.nsight();
    auto text = [&](Columns& row, int index) {
        return valid_utf8(lenient ? row.optional_text(index).value_or(std::string_view {}) : row.text(index));
    };
    auto integer = [&](Columns& row, int index) { return lenient ? row.integer_or(index, 0) : row.integer(index); };
    auto int32 = [&](Columns& row, int index) { return lenient ? row.int32_or(index, 0) : row.int32(index); };
    return read_table(context, c, [&](Columns& row) {
        GpuInfo gpu;
        gpu.id = row.int32(c["id"]);
        gpu.name = text(row, c["name"]);
        gpu.bus_location = text(row, c["busLocation"]);
        gpu.total_memory_bytes = integer(row, c["totalMemory"]);
        gpu.memory_bandwidth_bytes_per_s = integer(row, c["memoryBandwidth"]);
        gpu.clock_rate_hz = integer(row, c["clockRate"]);
        gpu.sm_count = int32(row, c["smCount"]);
        gpu.uuid = text(row, c["uuid"]);
        gpu.chip_name = text(row, c["chipName"]);
        gpu.compute_major = int32(row, c["computeMajor"]);
        gpu.compute_minor = int32(row, c["computeMinor"]);
        context.model.gpus.push_back(std::move(gpu));
    });
}

} // namespace fp8scope::analyzer::detail
