// Scenario::write_nsight(): the scenario in the layout of `nsys export --type sqlite`, so that the loader's
// nsys path is tested on the real table shapes.
//
// The DDL below follows the Nsight Systems AnalysisGuide "SQLite Schema Reference" (sqlite-schema-reference.rst)
// for export schema 3.28.1, nsys 2026.4: same tables, column order, types and NOT NULL constraints, and, as in
// nsys, no indexes. Only the tables that hold the scenario's data are created (nsys creates tables lazily). Enum
// values are those of schema.hpp, which follow the nsys ENUM_* tables.
#include "scenario.hpp"

#include "fp8scope/format/trace_db.hpp"
#include "scenario_rows.hpp"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <variant>

namespace fp8scope::testing {

namespace {

constexpr const char* kExportSchemaVersion = "3.28.1";

constexpr const char* kDdl = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
    nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER,
    sessionStartCntVctNs INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT,
    ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER,
    maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER,
    maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER,
    maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER,
    maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,
    computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER, numaNodeId INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_KERNEL_LAUNCH_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
    dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
    migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER,
    qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER,
    clusterZ INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,
    sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER, syncType INTEGER NOT NULL,
    eventId INTEGER NOT NULL, eventSyncId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
    callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
    domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
    int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT,
    eventId INTEGER NOT NULL PRIMARY KEY);
)sql";

// CUPTI_SYNCHRONIZATION_INVALID_VALUE (cupti_activity.h): the stream of a context or event sync and the event
// of a context or stream sync, which nsys keeps in its NOT NULL columns.
constexpr int64_t kInvalidSyncValue = 0xFFFFFFFF;

using Value = std::variant<std::monostate, int64_t, double, std::string>;
Value null()
{
    return std::monostate {};
}
template <class T> Value optional_value(const std::optional<T>& value)
{
    return value ? Value(static_cast<int64_t>(*value)) : null();
}

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
        if (sqlite3_exec(db_, kDdl, nullptr, nullptr, nullptr) != SQLITE_OK)
            return error("cannot create the nsys tables");
        return exec("BEGIN");
    }

    Expected<void> exec(const char* sql)
    {
        if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
            return error(sql);
        return {};
    }

    // INSERT INTO table VALUES (values...), with one prepared statement per table.
    Expected<void> insert(const std::string& table, std::initializer_list<Value> values)
    {
        sqlite3_stmt*& stmt = statements_[table];
        if (!stmt) {
            std::string sql = "INSERT INTO \"" + table + "\" VALUES (";
            for (size_t i = 0; i < values.size(); ++i)
                sql += i == 0 ? "?" : ", ?";
            sql += ")";
            if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
                return error("cannot prepare an insert into " + table);
        }
        int index = 1;
        for (const Value& value : values) {
            if (const auto* i = std::get_if<int64_t>(&value))
                sqlite3_bind_int64(stmt, index, *i);
            else if (const auto* d = std::get_if<double>(&value))
                sqlite3_bind_double(stmt, index, *d);
            else if (const auto* s = std::get_if<std::string>(&value))
                sqlite3_bind_text(stmt, index, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(stmt, index);
            ++index;
        }
        const int rc = sqlite3_step(stmt);
        sqlite3_reset(stmt);
        if (rc != SQLITE_DONE)
            return error("cannot insert into " + table);
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
            if (auto ok = insert("StringIds", { id, text }); !ok)
                return ok;
        }
        return exec("COMMIT");
    }

private:
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
             file.insert(
                 "META_DATA_EXPORT", { std::string("EXPORT_SCHEMA_VERSION"), std::string(kExportSchemaVersion) }),
             // A synthetic file: the product version says so instead of naming a real nsys release.
             file.insert("META_DATA_EXPORT",
                 { std::string("EXPORT_PRODUCT_VERSION"), std::string("fp8scope scenario builder") }),
             file.insert("TARGET_INFO_SYSTEM_ENV",
                 { int64_t { 0 }, std::string("Online"), std::string("Hostname"), int64_t { 0 }, session.host }),
             file.insert("TARGET_INFO_SESSION_START_TIME",
                 { session.utc_epoch_ns, std::string("2026-11-21T00:00:00.000Z"),
                     std::string("2026-11-21T00:00:00.000"), null(), null() }),
         }) {
        if (!ok)
            return ok;
    }
    for (const GpuInfoRow& gpu : s.gpus_) {
        // vmId, id, name, busLocation, isDiscrete, l2CacheSize, totalMemory, memoryBandwidth, clockRate,
        // smCount, pwGpuId, uuid, luid, chipName, cuDevice, then limits left NULL, computeMajor/Minor,
        // smMajor/Minor, numaNodeId.
        auto ok = file.insert("TARGET_INFO_GPU",
            { int64_t { 0 }, int64_t { gpu.id }, gpu.name, gpu.bus_location, int64_t { 1 }, int64_t { 52'428'800 },
                gpu.total_memory_bytes, gpu.memory_bandwidth_bytes_per_s, gpu.clock_rate_hz, int64_t { gpu.sm_count },
                null(), gpu.uuid, null(), gpu.chip_name, int64_t { gpu.id }, null(), null(), null(), null(), null(),
                null(), null(), null(), null(), null(), null(), int64_t { 32 }, null(), null(), null(), null(), null(),
                null(), null(), null(), null(), null(), int64_t { gpu.compute_major }, int64_t { gpu.compute_minor },
                int64_t { gpu.compute_major }, int64_t { gpu.compute_minor }, int64_t { 0 } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Thread& thread : s.threads_) {
        if (auto ok = file.insert("ThreadNames", { file.string_id(thread.name), null(), thread.global_tid }); !ok)
            return ok;
    }
    return {};
}

Expected<void> ScenarioWriters::write_enums(NsightFile& file)
{
    // nsys names the launch-type enum after CUDA, our schema after CUPTI; the values are CUPTI's in both.
    const std::map<std::string_view, std::string> nsys_names = {
        { "ENUM_NSYS_EVENT_TYPE", "ENUM_NSYS_EVENT_TYPE" },
        { "ENUM_NSYS_EVENT_CLASS", "ENUM_NSYS_EVENT_CLASS" },
        { "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEMCPY_OPER" },
        { "ENUM_CUDA_MEM_KIND", "ENUM_CUDA_MEM_KIND" },
        { "ENUM_CUPTI_KERNEL_LAUNCH_TYPE", "ENUM_CUDA_KERNEL_LAUNCH_TYPE" },
        { "ENUM_CUPTI_SYNC_TYPE", "ENUM_CUPTI_SYNC_TYPE" },
    };
    for (const schema::Enum& e : schema::enums()) {
        const auto name = nsys_names.find(e.table);
        if (name == nsys_names.end())
            continue; // fp8scope's own enums have no nsys table
        for (const schema::EnumValue& value : e.values) {
            auto ok = file.insert(
                name->second, { int64_t { value.id }, std::string(value.name), std::string(value.label) });
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
        const Value graph_id = row.graph_id != 0 ? Value(row.graph_id) : null();
        const Value graph_node_id = row.graph_node_id != 0 ? Value(row.graph_node_id) : null();
        auto ok = file.insert("CUPTI_ACTIVITY_KIND_KERNEL",
            { row.start_ns, row.end_ns, int64_t { row.device_id }, int64_t { row.context_id }, null(),
                int64_t { row.stream_id }, int64_t { row.correlation_id }, global_pid, file.string_id(demangled),
                file.string_id(kernel_short_name(demangled)), file.string_id(kernel.spec.name),
                int64_t { static_cast<int32_t>(c.launch_type) }, int64_t { 0 }, int64_t { c.registers_per_thread },
                int64_t { c.grid[0] }, int64_t { c.grid[1] }, int64_t { c.grid[2] }, int64_t { c.block[0] },
                int64_t { c.block[1] }, int64_t { c.block[2] }, c.static_shared_bytes, c.dynamic_shared_bytes,
                c.local_per_thread_bytes, c.local_total_bytes, ++grid_id, c.shared_executed_bytes, graph_node_id,
                int64_t { 0 }, null(), null(), null(), graph_id, int64_t { c.cluster[0] }, int64_t { c.cluster[1] },
                int64_t { c.cluster[2] }, int64_t { 0 }, int64_t { 0 }, int64_t { 0 }, null(), std::string() });
        if (!ok)
            return ok;
    }
    for (const Scenario::Sync& sync : s.syncs_) {
        const SyncRow row = rows::sync_row(
            sync.start_ns, sync.end_ns, sync.type, sync.stream_id, sync.device_id, sync.correlation_id);
        auto ok = file.insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            { row.start_ns, row.end_ns, int64_t { row.device_id }, int64_t { row.context_id }, null(),
                row.stream_id ? int64_t { *row.stream_id } : kInvalidSyncValue, int64_t { row.correlation_id },
                global_pid, null(), int64_t { static_cast<int32_t>(row.sync_type) },
                row.event_id ? int64_t { *row.event_id } : kInvalidSyncValue, optional_value(row.event_sync_id) });
        if (!ok)
            return ok;
    }
    for (const Scenario::Copy& copy : s.copies_) {
        const MemcpyRow row = rows::memcpy_row(copy.spec, copy.correlation_id);
        auto ok = file.insert("CUPTI_ACTIVITY_KIND_MEMCPY",
            { row.start_ns, row.end_ns, int64_t { row.device_id }, int64_t { row.context_id }, null(),
                int64_t { row.stream_id }, int64_t { row.correlation_id }, global_pid, static_cast<int64_t>(row.bytes),
                int64_t { static_cast<int32_t>(row.copy_kind) }, null(), int64_t { static_cast<int32_t>(row.src_kind) },
                int64_t { static_cast<int32_t>(row.dst_kind) }, optional_value(row.src_device_id),
                row.src_device_id ? Value(int64_t { row.context_id }) : null(), optional_value(row.dst_device_id),
                row.dst_device_id ? Value(int64_t { row.context_id }) : null(), null(), null(), null(),
                int64_t { 1 } });
        if (!ok)
            return ok;
    }
    for (const Scenario::Set& set : s.sets_) {
        const MemsetRow row = rows::memset_row(set.spec, set.correlation_id);
        auto ok = file.insert("CUPTI_ACTIVITY_KIND_MEMSET",
            { row.start_ns, row.end_ns, int64_t { row.device_id }, int64_t { row.context_id }, null(),
                int64_t { row.stream_id }, int64_t { row.correlation_id }, global_pid, int64_t { row.value },
                static_cast<int64_t>(row.bytes), null(), int64_t { static_cast<int32_t>(row.mem_kind) } });
        if (!ok)
            return ok;
    }
    return {};
}

Expected<void> ScenarioWriters::write_host_activity(const Scenario& s, NsightFile& file)
{
    for (const Scenario::Api& api : s.apis_) {
        const ApiRow row = rows::api_row(api.spec, api.global_tid, api.correlation_id, StringId {});
        auto ok = file.insert("CUPTI_ACTIVITY_KIND_RUNTIME",
            { row.start_ns, row.end_ns, int64_t { static_cast<int32_t>(row.event_class) }, row.global_tid,
                int64_t { row.correlation_id }, file.string_id(api.spec.name), int64_t { row.return_value }, null() });
        if (!ok)
            return ok;
    }
    int64_t event_id = 0;
    for (const Scenario::Nvtx& nvtx : s.nvtx_) {
        const NvtxRow row = rows::nvtx_row(nvtx.start_ns, nvtx.end_ns, StringId {}, nvtx.global_tid);
        // Both ways nsys stores NVTX text: ranges as registered strings (textId -> StringIds), marks as plain
        // `text` (sqlite-schema-event-values.rst). Marks have no end.
        const bool registered = row.end_ns.has_value();
        auto ok = file.insert("NVTX_EVENTS",
            { row.start_ns, optional_value(row.end_ns), int64_t { static_cast<int32_t>(row.event_type) }, null(),
                null(), null(), registered ? null() : Value(nvtx.text), row.global_tid, null(),
                registered ? Value(file.string_id(nvtx.text)) : null(), int64_t { 0 }, null(), null(), null(), null(),
                null(), null(), null(), null(), null(), ++event_id });
        if (!ok)
            return ok;
    }
    return {};
}

} // namespace fp8scope::testing
