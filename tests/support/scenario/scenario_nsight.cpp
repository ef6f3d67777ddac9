// Scenario::write_nsight(): the scenario in the layout of `nsys export --type sqlite`, so that the loader's
// nsys path is tested on the real table shapes.
//
// The tables are those the format declares for the export (fp8scope/format/nsys_schema.hpp: ours, with what the
// export adds to them, and its own), created from those declarations; a row is given as cells, each naming its column
// as the declaration does (a name the table lacks does not compile), and columns a row leaves out are NULL. As in
// nsys, there are no indexes, and only the tables that hold the scenario's data are created (nsys creates tables
// lazily). Enum values are those of schema.hpp, which follow the nsys ENUM_* tables.
#include "scenario.hpp"

#include "fp8scope/format/nsys_schema.hpp"
#include "fp8scope/format/trace_db.hpp"
#include "scenario_rows.hpp"

#include <sqlite3.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <map>
#include <span>
#include <string_view>
#include <sys/stat.h>
#include <type_traits>
#include <variant>

namespace fp8scope::testing {

namespace {

namespace nsys = schema::nsys::tables;

constexpr const char* kExportSchemaVersion = "3.28.1";

// The export's tables the scenario fills: these, then the ENUM_* tables (of nsys::kEnum's shape), then the activity.
constexpr const schema::Table* kExportTables[] = { &nsys::kStringIds, &nsys::kThreadNames, &nsys::kSystemEnv,
    &nsys::kSessionStart, &nsys::kTargetInfoGpu, &nsys::kMetaDataExport };
constexpr const schema::Table* kActivityTables[]
    = { &nsys::kMemcpy, &nsys::kMemset, &nsys::kKernel, &nsys::kSynchronization, &nsys::kRuntime, &nsys::kNvtxEvents };

// Our enum tables that nsys has, and their names there: nsys names the launch-type enum after CUDA, our schema after
// CUPTI; the values are CUPTI's in both.
const std::map<std::string_view, std::string_view> kNsysEnumNames = {
    { "ENUM_NSYS_EVENT_TYPE", "ENUM_NSYS_EVENT_TYPE" },
    { "ENUM_NSYS_EVENT_CLASS", "ENUM_NSYS_EVENT_CLASS" },
    { "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEMCPY_OPER" },
    { "ENUM_CUDA_MEM_KIND", "ENUM_CUDA_MEM_KIND" },
    { "ENUM_CUPTI_KERNEL_LAUNCH_TYPE", schema::nsys::kLaunchTypeEnum },
    { "ENUM_CUPTI_SYNC_TYPE", "ENUM_CUPTI_SYNC_TYPE" },
};

// CUPTI_SYNCHRONIZATION_INVALID_VALUE (cupti_activity.h): the stream of a context or event sync and the event
// of a context or stream sync, which nsys keeps in its NOT NULL columns.
constexpr int64_t kInvalidSyncValue = 0xFFFFFFFF;

// One value of a row: NULL, an integer (integers and enums by their number), a real or a text. A text is viewed, not
// copied: a row's values outlive the insert they are given to.
class SqlValue {
public:
    SqlValue() = default;
    SqlValue(std::nullopt_t) { } // NOLINT: implicit, as every constructor here, so that cells read as column = value
    template <class V>
    requires(std::is_integral_v<V> || std::is_enum_v<V>) SqlValue(V value) // NOLINT
        : value_(static_cast<int64_t>(value))
    {
    }
    SqlValue(double value) // NOLINT
        : value_(value)
    {
    }
    SqlValue(std::string_view text) // NOLINT
        : value_(text)
    {
    }
    SqlValue(const std::string& text) // NOLINT
        : value_(std::string_view(text))
    {
    }
    SqlValue(const char* text) // NOLINT
        : value_(std::string_view(text))
    {
    }
    template <class V>
    SqlValue(const std::optional<V>& value) // NOLINT
        : SqlValue(value ? SqlValue(*value) : SqlValue())
    {
    }

    // Whether the value may stand in `column`: NULL where it is nullable, else a value of its SQL type.
    bool fits(const schema::Column& column) const
    {
        if (std::holds_alternative<std::monostate>(value_))
            return column.nullable;
        if (std::holds_alternative<int64_t>(value_))
            return column.sql_type == "INTEGER";
        if (std::holds_alternative<double>(value_))
            return column.sql_type == "REAL";
        return column.sql_type == "TEXT";
    }
    void bind(sqlite3_stmt* stmt, int index) const
    {
        if (const auto* i = std::get_if<int64_t>(&value_))
            sqlite3_bind_int64(stmt, index, *i);
        else if (const auto* d = std::get_if<double>(&value_))
            sqlite3_bind_double(stmt, index, *d);
        else if (const auto* s = std::get_if<std::string_view>(&value_))
            sqlite3_bind_text(stmt, index, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(stmt, index);
    }

private:
    std::variant<std::monostate, int64_t, double, std::string_view> value_;
};

// One cell of a row of T: its column, named as T declares it, and its value.
template <const schema::Table& T> struct Cell {
    schema::ColumnOf<T> column;
    SqlValue value;
};

class NsightFile {
public:
    explicit NsightFile(std::string path)
        : path_(std::move(path))
    {
    }
    ~NsightFile()
    {
        for (auto& [sql, stmt] : statements_)
            sqlite3_finalize(stmt);
        sqlite3_close_v2(db_);
    }
    NsightFile(const NsightFile&) = delete;
    NsightFile& operator=(const NsightFile&) = delete;

    Expected<void> create()
    {
        struct stat info { };
        if (::lstat(path_.c_str(), &info) == 0)
            return make_error(ErrorCode::Io, path_ + ": cannot create the Nsight export: the file exists");
        if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
            return error("cannot create the Nsight export");
        for (const schema::Table* table : kExportTables)
            if (auto ok = exec(schema::create_sql(*table)); !ok)
                return ok;
        for (const auto& [ours, name] : kNsysEnumNames) {
            schema::Table table = nsys::kEnum;
            table.name = name;
            if (auto ok = exec(schema::create_sql(table)); !ok)
                return ok;
        }
        for (const schema::Table* table : kActivityTables)
            if (auto ok = exec(schema::create_sql(*table)); !ok)
                return ok;
        return exec("BEGIN");
    }

    Expected<void> exec(const std::string& sql)
    {
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
            return error(sql);
        return {};
    }

    // One row of T (under `name`, for the ENUM_* tables that share one declaration), with one prepared statement per
    // table. A column the cells leave out is NULL; one given twice, or a value that does not fit its column, is an
    // error naming it, as is a NOT NULL column left out (SQLite's "NOT NULL constraint failed").
    template <const schema::Table& T>
    Expected<void> insert(std::initializer_list<Cell<T>> cells, std::string_view name = T.name)
    {
        std::array<const SqlValue*, T.columns.size()> values {};
        for (const Cell<T>& cell : cells) {
            const schema::Column& column = cell.column.column();
            if (values[cell.column.index])
                return mistake(std::string(name) + "." + std::string(column.name) + " given twice");
            if (!cell.value.fits(column))
                return mistake("a value that does not fit " + std::string(name) + "." + std::string(column.name));
            values[cell.column.index] = &cell.value;
        }
        sqlite3_stmt*& stmt = statements_[std::string(name)];
        if (!stmt) {
            const std::string sql = insert_sql(name, T.columns);
            if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
                return error("cannot prepare an insert into " + std::string(name));
        }
        for (size_t i = 0; i < values.size(); ++i)
            (values[i] ? *values[i] : SqlValue()).bind(stmt, static_cast<int>(i) + 1);
        const int rc = sqlite3_step(stmt);
        sqlite3_reset(stmt);
        if (rc != SQLITE_DONE)
            return error("cannot insert into " + std::string(name));
        return {};
    }

    // nsys interns every kernel, API and registered NVTX name in StringIds; ids start at 0 here.
    int64_t string_id(const std::string& text)
    {
        const auto [it, inserted] = strings_.emplace(text, static_cast<int64_t>(strings_.size()));
        return it->second;
    }

    Expected<void> finish()
    {
        for (const auto& [text, id] : strings_) {
            if (auto ok = insert<nsys::kStringIds>({ { "id", id }, { "value", text } }); !ok)
                return ok;
        }
        return exec("COMMIT");
    }

private:
    // INSERT INTO "name" ("column", ...) VALUES (?, ...): every declared column, in the declaration's order.
    static std::string insert_sql(std::string_view name, std::span<const schema::Column> columns)
    {
        std::string sql = "INSERT INTO \"" + std::string(name) + "\" (";
        std::string values;
        for (size_t i = 0; i < columns.size(); ++i) {
            sql += (i == 0 ? "\"" : ", \"") + std::string(columns[i].name) + "\"";
            values += i == 0 ? "?" : ", ?";
        }
        return sql + ") VALUES (" + values + ")";
    }

    // A row this file's own code got wrong, which SQLite never saw.
    std::unexpected<Error> mistake(const std::string& what) const
    {
        return make_error(ErrorCode::Usage, path_ + ": " + what);
    }
    std::unexpected<Error> error(const std::string& what) const
    {
        return make_error(ErrorCode::Io, path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory"));
    }

    std::string path_;
    sqlite3* db_ = nullptr;
    std::map<std::string, sqlite3_stmt*> statements_;
    std::map<std::string, int64_t> strings_;
};

} // namespace

class ScenarioWriters {
public:
    static Expected<void> write_nsight(const Scenario& s, const std::string& path);

private:
    static Expected<void> write_target_info(const Scenario& s, NsightFile& file);
    static Expected<void> write_enums(NsightFile& file);
    static Expected<void> write_gpu_activity(const Scenario& s, NsightFile& file);
    static Expected<void> write_host_activity(const Scenario& s, NsightFile& file);
};

Expected<void> Scenario::write_nsight(const std::string& path) const
{
    return ScenarioWriters::write_nsight(*this, path);
}

Expected<void> ScenarioWriters::write_nsight(const Scenario& s, const std::string& path)
{
    NsightFile file(path);
    if (auto ok = file.create(); !ok)
        return ok;
    if (auto ok = write_target_info(s, file); !ok)
        return ok;
    if (auto ok = write_enums(file); !ok)
        return ok;
    if (auto ok = write_gpu_activity(s, file); !ok)
        return ok;
    if (auto ok = write_host_activity(s, file); !ok)
        return ok;
    return file.finish();
}

Expected<void> ScenarioWriters::write_target_info(const Scenario& s, NsightFile& file)
{
    const SessionInfo& session = s.session_;
    for (auto ok : {
             file.insert<nsys::kMetaDataExport>(
                 { { "name", "EXPORT_SCHEMA_VERSION" }, { "value", kExportSchemaVersion } }),
             // A synthetic file: the product version says so instead of naming a real nsys release.
             file.insert<nsys::kMetaDataExport>(
                 { { "name", "EXPORT_PRODUCT_VERSION" }, { "value", "fp8scope scenario builder" } }),
             file.insert<nsys::kSystemEnv>({ { "globalVid", 0 }, { "devStateName", "Online" }, { "name", "Hostname" },
                 { "nameEnum", 0 }, { "value", session.host } }),
             file.insert<nsys::kSessionStart>({ { "utcEpochNs", session.utc_epoch_ns },
                 { "utcTime", "2026-11-21T00:00:00.000Z" }, { "localTime", "2026-11-21T00:00:00.000" } }),
         }) {
        if (!ok)
            return ok;
    }
    for (const GpuInfoRow& gpu : s.gpus_) {
        // The limits nsys also reports (maxIPC, maxShmemPerBlock, ...) are left NULL: no reader uses them.
        auto ok = file.insert<nsys::kTargetInfoGpu>({ { "vmId", 0 }, { "id", gpu.id }, { "name", gpu.name },
            { "busLocation", gpu.bus_location }, { "isDiscrete", 1 }, { "l2CacheSize", 52'428'800 },
            { "totalMemory", gpu.total_memory_bytes }, { "memoryBandwidth", gpu.memory_bandwidth_bytes_per_s },
            { "clockRate", gpu.clock_rate_hz }, { "smCount", gpu.sm_count }, { "uuid", gpu.uuid },
            { "chipName", gpu.chip_name }, { "cuDevice", gpu.id }, { "threadsPerWarp", 32 },
            { "computeMajor", gpu.compute_major }, { "computeMinor", gpu.compute_minor },
            { "smMajor", gpu.compute_major }, { "smMinor", gpu.compute_minor }, { "numaNodeId", 0 } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Thread& thread : s.threads_) {
        auto ok = file.insert<nsys::kThreadNames>(
            { { "nameId", file.string_id(thread.name) }, { "globalTid", thread.global_tid } });
        if (!ok)
            return ok;
    }
    return {};
}

Expected<void> ScenarioWriters::write_enums(NsightFile& file)
{
    for (const schema::Enum& e : schema::enums()) {
        const auto name = kNsysEnumNames.find(e.table);
        if (name == kNsysEnumNames.end())
            continue; // fp8scope's own enums have no nsys table
        for (const schema::EnumValue& value : e.values) {
            auto ok = file.insert<nsys::kEnum>(
                { { "id", value.id }, { "name", value.name }, { "label", value.label } }, name->second);
            if (!ok)
                return ok;
        }
    }
    return {};
}

Expected<void> ScenarioWriters::write_gpu_activity(const Scenario& s, NsightFile& file)
{
    const int64_t global_pid = schema::global_pid(s.session_.pid);
    int64_t grid_id = 0;
    for (const Scenario::Kernel& kernel : s.kernels_) {
        const KernelRow row = rows::kernel_row(kernel.spec, kernel.correlation_id, StringId {});
        const std::string demangled = demangle_kernel_name(kernel.spec.name);
        const KernelConfig& c = row.config;
        // Graph columns are NULL for kernels not launched from a graph.
        const SqlValue graph_id = row.graph_id != 0 ? SqlValue(row.graph_id) : SqlValue();
        const SqlValue graph_node_id = row.graph_node_id != 0 ? SqlValue(row.graph_node_id) : SqlValue();
        auto ok = file.insert<nsys::kKernel>(
            { { "start", row.start_ns }, { "end", row.end_ns }, { "deviceId", row.device_id },
                { "contextId", row.context_id }, { "streamId", row.stream_id }, { "correlationId", row.correlation_id },
                { "globalPid", global_pid }, { "demangledName", file.string_id(demangled) },
                { "shortName", file.string_id(kernel_short_name(demangled)) },
                { "mangledName", file.string_id(kernel.spec.name) }, { "launchType", c.launch_type },
                { "cacheConfig", 0 }, { "registersPerThread", c.registers_per_thread }, { "gridX", c.grid[0] },
                { "gridY", c.grid[1] }, { "gridZ", c.grid[2] }, { "blockX", c.block[0] }, { "blockY", c.block[1] },
                { "blockZ", c.block[2] }, { "staticSharedMemory", c.static_shared_bytes },
                { "dynamicSharedMemory", c.dynamic_shared_bytes }, { "localMemoryPerThread", c.local_per_thread_bytes },
                { "localMemoryTotal", c.local_total_bytes }, { "gridId", ++grid_id },
                { "sharedMemoryExecuted", c.shared_executed_bytes }, { "graphNodeId", graph_node_id },
                { "sharedMemoryLimitConfig", 0 }, { "graphId", graph_id }, { "clusterX", c.cluster[0] },
                { "clusterY", c.cluster[1] }, { "clusterZ", c.cluster[2] }, { "clusterSchedulingPolicy", 0 },
                { "maxPotentialClusterSize", 0 }, { "maxActiveClusters", 0 }, { "tensorSizeMinusOneElements", "" } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Sync& sync : s.syncs_) {
        const SyncRow row = rows::sync_row(
            sync.start_ns, sync.end_ns, sync.type, sync.stream_id, sync.device_id, sync.correlation_id);
        auto ok = file.insert<nsys::kSynchronization>({ { "start", row.start_ns }, { "end", row.end_ns },
            { "deviceId", row.device_id }, { "contextId", row.context_id },
            { "streamId", row.stream_id ? int64_t { *row.stream_id } : kInvalidSyncValue },
            { "correlationId", row.correlation_id }, { "globalPid", global_pid }, { "syncType", row.sync_type },
            { "eventId", row.event_id ? int64_t { *row.event_id } : kInvalidSyncValue },
            { "eventSyncId", row.event_sync_id } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Copy& copy : s.copies_) {
        const MemcpyRow row = rows::memcpy_row(copy.spec, copy.correlation_id);
        // A device side's context is the copy's.
        const auto context_if = [&](const std::optional<uint32_t>& device) {
            return device ? std::optional(row.context_id) : std::nullopt;
        };
        auto ok = file.insert<nsys::kMemcpy>(
            { { "start", row.start_ns }, { "end", row.end_ns }, { "deviceId", row.device_id },
                { "contextId", row.context_id }, { "streamId", row.stream_id }, { "correlationId", row.correlation_id },
                { "globalPid", global_pid }, { "bytes", row.bytes }, { "copyKind", row.copy_kind },
                { "srcKind", row.src_kind }, { "dstKind", row.dst_kind }, { "srcDeviceId", row.src_device_id },
                { "srcContextId", context_if(row.src_device_id) }, { "dstDeviceId", row.dst_device_id },
                { "dstContextId", context_if(row.dst_device_id) }, { "copyCount", 1 } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Set& set : s.sets_) {
        const MemsetRow row = rows::memset_row(set.spec, set.correlation_id);
        auto ok = file.insert<nsys::kMemset>({ { "start", row.start_ns }, { "end", row.end_ns },
            { "deviceId", row.device_id }, { "contextId", row.context_id }, { "streamId", row.stream_id },
            { "correlationId", row.correlation_id }, { "globalPid", global_pid }, { "value", row.value },
            { "bytes", row.bytes }, { "memKind", row.mem_kind } });
        if (!ok)
            return ok;
    }
    return {};
}

Expected<void> ScenarioWriters::write_host_activity(const Scenario& s, NsightFile& file)
{
    for (const Scenario::Api& api : s.apis_) {
        const ApiRow row = rows::api_row(api.spec, api.global_tid, api.correlation_id, StringId {});
        auto ok = file.insert<nsys::kRuntime>({ { "start", row.start_ns }, { "end", row.end_ns },
            { "eventClass", row.event_class }, { "globalTid", row.global_tid }, { "correlationId", row.correlation_id },
            { "nameId", file.string_id(api.spec.name) }, { "returnValue", row.return_value } });
        if (!ok)
            return ok;
    }
    int64_t event_id = 0;
    for (const Scenario::Nvtx& nvtx : s.nvtx_) {
        const NvtxRow row = rows::nvtx_row(nvtx.start_ns, nvtx.end_ns, StringId {}, nvtx.global_tid);
        // Both ways nsys stores NVTX text: ranges as registered strings (textId -> StringIds), marks as plain
        // `text` (sqlite-schema-event-values.rst). Marks have no end.
        const bool registered = row.end_ns.has_value();
        auto ok = file.insert<nsys::kNvtxEvents>(
            { { "start", row.start_ns }, { "end", row.end_ns }, { "eventType", row.event_type },
                { "text", registered ? SqlValue() : SqlValue(nvtx.text) }, { "globalTid", row.global_tid },
                { "textId", registered ? SqlValue(file.string_id(nvtx.text)) : SqlValue() }, { "domainId", 0 },
                { "eventId", ++event_id } });
        if (!ok)
            return ok;
    }
    return {};
}

} // namespace fp8scope::testing
