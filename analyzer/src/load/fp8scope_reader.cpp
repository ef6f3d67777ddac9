// Reads an fp8scope trace (schema.hpp): version and meta first, then a check that every table and column of the
// schema is there, then the tables.
#include "fp8scope/format/schema.hpp"
#include "load/id_index.hpp"
#include "load/readers.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <vector>

namespace fp8scope::analyzer::detail {

// fp8scope_tables.cpp: the FP8SCOPE_* tables that nsys does not have, and of them those a summary reads.
Expected<void> read_fp8scope_tables(ReadContext& context);
Expected<void> read_fp8scope_summary_tables(ReadContext& context);

namespace {

struct MetaValue {
    int type = SQLITE_NULL;
    int64_t integer = 0;
    std::string text;
};
using MetaRows = std::map<std::string, MetaValue, std::less<>>;

struct Version {
    int major = 0, minor = 0;
    friend bool operator==(Version, Version) = default;
};

std::optional<Version> parse_version(std::string_view text)
{
    Version version;
    const char* end = text.data() + text.size();
    auto [dot, ec] = std::from_chars(text.data(), end, version.major);
    if (ec != std::errc {} || dot == end || *dot != '.')
        return std::nullopt;
    auto [last, ec_minor] = std::from_chars(dot + 1, end, version.minor);
    if (ec_minor != std::errc {} || last != end || version.major < 0 || version.minor < 0)
        return std::nullopt;
    return version;
}

Error newer_version(const TraceFile& file, Version version)
{
    return Error { ErrorCode::NewerVersion,
        one_line(fmt::format("trace '{}' has schema version {}.{}, newer than this fp8scope reads ({}.{}); use "
                             "a newer fp8scope",
            file.path(), version.major, version.minor, schema::kMajorVersion, schema::kMinorVersion)) };
}

Expected<int32_t> user_version(const TraceFile& file)
{
    auto statement = file.prepare("PRAGMA user_version", "reading the schema version");
    if (!statement)
        return std::unexpected(statement.error());
    auto has_row = statement->step();
    if (!has_row)
        return std::unexpected(has_row.error());
    return *has_row ? static_cast<int32_t>(sqlite3_column_int64(statement->get(), 0)) : 0;
}

Expected<MetaRows> read_meta_rows(ReadContext& context)
{
    constexpr const schema::Table& kTable = schema::tables::kMeta;
    const TableColumns<kTable> columns(context.file, ColumnsFrom::OurTrace, EveryColumn {});
    const int key = columns["key"], column = columns["value"];
    if (auto ok = columns.check(); !ok)
        return std::unexpected(ok.error());
    MetaRows values;
    auto rows = for_each_row(context.file, columns, [&](Columns& row) {
        MetaValue value;
        value.type = row.type(column);
        if (value.type == SQLITE_INTEGER)
            value.integer = row.integer(column);
        if (value.type == SQLITE_BLOB)
            value.text = fmt::format("<{}-byte blob>", row.blob(column).size());
        else if (value.type != SQLITE_NULL)
            value.text = valid_utf8(row.as_text(column));
        values[valid_utf8(row.text(key))] = std::move(value);
    });
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(kTable.name)] = *rows;
    return values;
}

// Fills model.meta from FP8SCOPE_META and checks that its schema_version agrees with PRAGMA user_version.
Expected<void> read_meta(ReadContext& context, Version file_version)
{
    auto rows = read_meta_rows(context);
    if (!rows)
        return std::unexpected(rows.error());
    TraceMeta& meta = context.model.meta;
    for (const auto& [key, value] : *rows)
        meta.raw[key] = value.text;

    const auto version_it = rows->find(schema::meta::kSchemaVersion);
    if (version_it == rows->end())
        return std::unexpected(context.file.invalid("FP8SCOPE_META has no schema_version"));
    const auto meta_version = parse_version(version_it->second.text);
    if (!meta_version)
        return std::unexpected(context.file.invalid(
            fmt::format("FP8SCOPE_META schema_version '{}' is not MAJOR.MINOR", version_it->second.text)));
    if (*meta_version != file_version)
        return std::unexpected(
            context.file.invalid(fmt::format("PRAGMA user_version says {}.{} but FP8SCOPE_META schema_version "
                                             "says {}.{}",
                file_version.major, file_version.minor, meta_version->major, meta_version->minor)));
    meta.schema_major = meta_version->major;
    meta.schema_minor = meta_version->minor;

    std::string problem;
    const auto text = [&](std::string_view key) {
        const auto it = rows->find(key);
        return it == rows->end() ? std::string {} : it->second.text;
    };
    const auto integer = [&](std::string_view key, int64_t fallback, int64_t low, int64_t high) -> int64_t {
        const auto it = rows->find(key);
        if (it == rows->end() || it->second.type == SQLITE_NULL)
            return fallback;
        int64_t value = it->second.integer;
        if (it->second.type != SQLITE_INTEGER) {
            const std::string& s = it->second.text;
            auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
            if (ec != std::errc {} || end != s.data() + s.size()) {
                problem = fmt::format("FP8SCOPE_META {} = '{}' is not an integer", key, s);
                return fallback;
            }
        }
        if (value < low || value > high) {
            problem = fmt::format("FP8SCOPE_META {} = {} is out of range", key, value);
            return fallback;
        }
        return value;
    };
    constexpr int64_t kMin32 = INT32_MIN, kMax32 = INT32_MAX, kMin64 = INT64_MIN, kMax64 = INT64_MAX;
    meta.producer = text(schema::meta::kProducer);
    meta.command_line = text(schema::meta::kCommandLine);
    meta.host = text(schema::meta::kHost);
    meta.finish_reason = text(schema::meta::kFinishReason);
    meta.pid = integer(schema::meta::kPid, -1, kMin64, kMax64);
    meta.rank = static_cast<int32_t>(integer(schema::meta::kRank, -1, kMin32, kMax32));
    meta.world_size = static_cast<int32_t>(integer(schema::meta::kWorldSize, -1, kMin32, kMax32));
    meta.cuda_runtime_version = static_cast<int32_t>(integer(schema::meta::kCudaRuntimeVersion, 0, 0, kMax32));
    meta.cuda_driver_version = static_cast<int32_t>(integer(schema::meta::kCudaDriverVersion, 0, 0, kMax32));
    meta.cupti_version = static_cast<int32_t>(integer(schema::meta::kCuptiVersion, 0, 0, kMax32));
    meta.session_start_utc_ns = integer(schema::meta::kSessionStartUtcNs, 0, kMin64, kMax64);
    meta.finished = integer(schema::meta::kFinished, 0, 0, 1) == 1;
    meta.tensor_stats_skipped = integer(schema::meta::kTensorStatsSkipped, 0, 0, kMax64);
    context.model.capture.max_bytes = integer(schema::meta::kTraceMaxBytes, 0, 0, kMax64);
    context.model.capture.windows_dropped = integer(schema::meta::kCaptureWindowsDropped, 0, 0, kMax64);
    if (!problem.empty())
        return std::unexpected(context.file.invalid(problem));
    return {};
}

// Every table of the schema must exist, with every column: a minor version only adds, so a 1.x trace has all
// the tables and columns of 1.0 to 1.x (a table added later is read as empty, a column added later as NULL).
Expected<void> check_tables(const TraceFile& file, int file_minor)
{
    for (const schema::Table& table : schema::kTables) {
        if (table.kind == schema::TableKind::View)
            continue; // CUPTI_ACTIVITY_KIND_KERNEL, a view for SQL users; the loader reads its two tables
        if (table.since_minor > file_minor && !file.has_table(table.name))
            continue;
        if (!file.has_table(table.name))
            return std::unexpected(Error {
                ErrorCode::InvalidTrace, one_line(fmt::format("trace '{}' lacks table {}", file.path(), table.name)) });
        std::vector<std::string_view> names;
        for (const schema::Column& column : table.columns)
            if (column.since_minor <= file_minor) // a column added later is read as NULL (absent)
                names.push_back(column.name);
        if (auto ok = require_columns(file, table.name, names); !ok)
            return ok;
    }
    return {};
}

// FP8SCOPE_KERNEL joined in memory with FP8SCOPE_KERNEL_CONFIG (the nsys-shaped view would cost a join per
// row and is never read: the loader reads tables only).
Expected<void> read_kernels(ReadContext& context)
{
    constexpr const schema::Table& kConfigTable = schema::tables::kKernelConfig;
    const TableColumns<kConfigTable> config(
        context.file, ColumnsFrom::Declaration, { "id", "demangledName", "shortName" });
    std::vector<int64_t> config_ids;
    std::vector<StringRef> config_names, config_short_names;
    auto configs = for_each_row(context.file, config, [&](Columns& row) {
        config_ids.push_back(row.integer(config["id"]));
        config_names.push_back(string_ref(row, config["demangledName"], context.strings));
        config_short_names.push_back(string_ref(row, config["shortName"], context.strings));
    });
    if (!configs)
        return std::unexpected(configs.error());
    context.model.row_counts[std::string(kConfigTable.name)] = *configs;
    IdIndex config_index;
    if (const auto duplicate = config_index.build(config_ids))
        return std::unexpected(
            context.file.invalid(fmt::format("duplicate id {} in {}", *duplicate, kConfigTable.name)));

    constexpr const schema::Table& kTable = schema::tables::kFp8Kernel;
    const TableColumns<kTable> c(context.file, ColumnsFrom::Declaration,
        { "start", "duration", "deviceId", "streamId", "correlationId", "configId", "graphId" });
    const int duration = c["duration"], config_id = c["configId"];
    KernelTable& t = context.model.kernels;
    auto reserved = reserve_rows(context, kTable.name, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id,
        t.name, t.short_name, t.graph_id);
    if (!reserved)
        return std::unexpected(reserved.error());
    auto rows = for_each_row(context.file, c, [&](Columns& row) {
        const int64_t start_ns = row.time(c["start"]);
        const int64_t duration_ns = row.integer(duration);
        int64_t end_ns = start_ns;
        if (duration_ns < 0) [[unlikely]]
            row.fail_row("negative duration");
        else if (duration_ns > 2 * kMaxTraceTimeNs) [[unlikely]]
            row.fail(duration, fmt::format("value {} out of range", duration_ns));
        else
            end_ns = row.checked_time(duration, start_ns + duration_ns); // the end: start + duration
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.device_id.push_back(row.id32(c["deviceId"]));
        t.stream_id.push_back(row.id32(c["streamId"]));
        t.correlation_id.push_back(row.id32(c["correlationId"]));
        const int64_t id = row.integer(config_id);
        const auto found = config_index.find(id);
        if (!found) [[unlikely]] {
            row.fail(config_id, fmt::format("dangling configId {}", id));
            t.name.push_back({});
            t.short_name.push_back({});
        } else {
            t.name.push_back(config_names[*found]);
            t.short_name.push_back(config_short_names[*found]);
        }
        t.graph_id.push_back(row.id32(c["graphId"]));
    });
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(kTable.name)] = *rows;
    return {};
}

// The version, the meta and the tables' presence: what every read of an fp8scope trace begins with.
Expected<void> read_version_and_meta(ReadContext& context)
{
    context.model.meta.source = TraceSource::Fp8scope;
    // The version comes first: a newer major version may have changed any table, FP8SCOPE_META included.
    auto encoded = user_version(context.file);
    if (!encoded)
        return std::unexpected(encoded.error());
    const Version file_version { schema::decode_major(*encoded), schema::decode_minor(*encoded) };
    if (file_version.major > schema::kMajorVersion)
        return std::unexpected(newer_version(context.file, file_version));
    if (auto ok = read_meta(context, file_version); !ok)
        return ok;
    return check_tables(context.file, file_version.minor);
}

} // namespace

Expected<void> read_fp8scope_summary(const TraceFile& file, TraceModel& model, const RowCounts& recorded)
{
    StringIdMap strings;
    ReadContext context { file, model, strings, Dialect::Fp8scope, &recorded };
    if (auto ok = read_version_and_meta(context); !ok)
        return ok;
    if (auto ok = read_gpus(context); !ok)
        return ok;
    return read_fp8scope_summary_tables(context);
}

Expected<void> read_fp8scope(const TraceFile& file, TraceModel& model, const RowCounts& recorded)
{
    StringIdMap strings;
    ReadContext context { file, model, strings, Dialect::Fp8scope, &recorded };
    if (auto ok = read_version_and_meta(context); !ok)
        return ok;
    const size_t strings_before = model.strings.size();
    if (auto ok = strings.load(file, model.strings); !ok)
        return ok;
    model.row_counts[std::string(schema::table::kStringIds)]
        = static_cast<int64_t>(model.strings.size() - strings_before);
    if (auto ok = read_kernels_alongside(context, read_kernels, read_api_calls); !ok)
        return ok;
    for (auto read :
        { read_syncs, read_memcpys, read_memsets, read_nvtx, read_thread_names, read_gpus, read_fp8scope_tables }) {
        if (auto ok = read(context); !ok)
            return ok;
    }
    return {};
}

Expected<RowCounts> recorded_row_counts(const TraceFile& file)
{
    RowCounts counts;
    if (!file.has_table(schema::table::kMeta))
        return counts;
    // A meta table that cannot be read this way is left to read_meta's errors and to quick_check.
    auto statement = file.prepare("SELECT key, value FROM \"" + std::string(schema::table::kMeta)
            + "\" WHERE substr(key, 1, " + std::to_string(schema::meta::kRowCountPrefix.size()) + ") = '"
            + std::string(schema::meta::kRowCountPrefix) + "'",
        "reading the recorded row counts");
    if (!statement)
        return counts;
    for (;;) {
        auto has_row = statement->step();
        if (!has_row || !*has_row)
            return counts;
        sqlite3_stmt* stmt = statement->get();
        const auto* key = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        const std::string table = valid_utf8(key ? key : "").substr(schema::meta::kRowCountPrefix.size());
        if (sqlite3_column_type(stmt, 1) != SQLITE_INTEGER || sqlite3_column_int64(stmt, 1) < 0)
            return std::unexpected(file.invalid(
                fmt::format("FP8SCOPE_META {}{} is not a row count", schema::meta::kRowCountPrefix, table)));
        counts[table] = sqlite3_column_int64(stmt, 1);
    }
}

Expected<int64_t> rows_to_expect(const ReadContext& context, std::string_view table)
{
    // A row of an activity table takes at least 8 bytes of the file: its cell pointer, payload size, rowid, header
    // size and one type byte for each of its 5 or more columns. A count the file could not hold is a lie (refused by
    // check_row_counts after the read), and reserving it could exhaust memory.
    constexpr int64_t kMinRowBytes = 8;
    if (context.recorded) {
        const auto it = context.recorded->find(table);
        std::error_code error;
        const auto file_bytes = std::filesystem::file_size(context.file.path(), error);
        if (it != context.recorded->end() && !error && it->second <= static_cast<int64_t>(file_bytes) / kMinRowBytes)
            return it->second;
    }
    return context.file.count_rows(table);
}

Expected<void> check_row_counts(const TraceFile& file, const TraceModel& model, const RowCounts& recorded)
{
    for (const schema::Table& table : schema::kTables) {
        if (!schema::meta::counts_rows(table))
            continue;
        const auto read = model.row_counts.find(std::string(table.name));
        if (read == model.row_counts.end())
            continue;
        const auto written = recorded.find(table.name);
        if (written == recorded.end())
            return std::unexpected(Error { ErrorCode::InvalidTrace,
                one_line(fmt::format("trace '{}' is corrupt: FP8SCOPE_META records the row counts of other tables "
                                     "but not of {} (row counts)",
                    file.path(), table.name)) });
        if (written->second != read->second)
            return std::unexpected(Error { ErrorCode::InvalidTrace,
                one_line(fmt::format("trace '{}' is corrupt: {} reads as {} rows, but {} were written (row counts)",
                    file.path(), table.name, read->second, written->second)) });
    }
    return {};
}

} // namespace fp8scope::analyzer::detail
