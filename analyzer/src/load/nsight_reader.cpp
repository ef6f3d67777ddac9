// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`). Column names and nullability follow the
// nsys AnalysisGuide "SQLite Schema Reference" for schema 3.28.1 (nsys 2026.4), as the export's declarations
// (fp8scope/format/nsys_schema.hpp) state them; older exports lack some columns (graphId, eventClass, ...) and are read
// with defaults. Tables exist only when nsys had data for them.
#include "fp8scope/format/nsys_schema.hpp"
#include "fp8scope/format/schema.hpp"
#include "load/readers.hpp"

#include <fmt/format.h>

#include <charconv>

namespace fp8scope::analyzer::detail {

namespace {

namespace nsys = schema::nsys::tables;

// The value of the first row of the key/value table T (META_DATA_EXPORT, TARGET_INFO_SYSTEM_ENV: columns name and
// value) whose name is `key`, if the table and row exist. Names come from T's declaration; the key is bound.
template <const schema::Table& T>
Expected<std::optional<std::string>> lookup(const TraceFile& file, std::string_view key)
{
    constexpr std::string_view key_column = schema::ColumnOf<T>("name").column().name;
    constexpr std::string_view value_column = schema::ColumnOf<T>("value").column().name;
    if (!file.has_table(T.name))
        return std::nullopt;
    const std::string_view columns[] = { key_column, value_column };
    if (auto ok = require_columns(file, T.name, columns); !ok)
        return std::unexpected(ok.error());
    const std::string_view select[] = { value_column };
    const std::string sql = select_sql(T.name, select) + " WHERE \"" + std::string(key_column) + "\" = ? LIMIT 1";
    auto statement = file.prepare(sql, "reading " + std::string(T.name));
    if (!statement)
        return std::unexpected(statement.error());
    statement->bind_text(1, key);
    auto has_row = statement->step();
    if (!has_row)
        return std::unexpected(has_row.error());
    if (!*has_row || sqlite3_column_type(statement->get(), 0) == SQLITE_NULL)
        return std::nullopt;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), 0));
    const int bytes = sqlite3_column_bytes(statement->get(), 0);
    return valid_utf8(std::string_view(text, static_cast<size_t>(bytes)));
}

Expected<void> read_meta(ReadContext& context)
{
    TraceMeta& meta = context.model.meta;
    meta.source = TraceSource::Nsight;
    meta.finished = true; // an export is written from a complete report

    // EXPORT_SCHEMA_VERSION is major.minor.micro; only the producer string and the major/minor fields use it.
    auto version = lookup<nsys::kMetaDataExport>(context.file, "EXPORT_SCHEMA_VERSION");
    if (!version)
        return std::unexpected(version.error());
    meta.producer = fmt::format("Nsight Systems export (schema {})", version->value_or("unknown"));
    if (*version) {
        meta.raw["EXPORT_SCHEMA_VERSION"] = **version;
        const std::string& text = **version;
        const char* end = text.data() + text.size();
        auto [dot, ec] = std::from_chars(text.data(), end, meta.schema_major);
        if (ec == std::errc {} && dot != end && *dot == '.')
            std::from_chars(dot + 1, end, meta.schema_minor);
    }

    auto host = lookup<nsys::kSystemEnv>(context.file, "Hostname");
    if (!host)
        return std::unexpected(host.error());
    meta.host = host->value_or("");

    constexpr const schema::Table& kSessionTable = nsys::kSessionStart;
    if (context.file.has_table(kSessionTable.name)) {
        // Not asked of the file: an export without the column fails in SQLite's words, as it always has.
        const TableColumns<kSessionTable> c(context.file, ColumnsFrom::Declaration, { "utcEpochNs" });
        auto rows = for_each_row(context.file, c, [&](Columns& row) {
            if (row.row() == 1)
                meta.session_start_utc_ns = row.integer_or(c["utcEpochNs"], 0);
        });
        if (!rows)
            return std::unexpected(rows.error());
    }
    return {};
}

Expected<void> read_kernels(ReadContext& context)
{
    // The export's kernel table: the columns of our nsys-shaped view, and more (nsys_schema.hpp).
    constexpr const schema::Table& kTable = nsys::kKernel;
    if (!context.file.has_table(kTable.name))
        return {};
    const TableColumns<kTable> c(context.file, ColumnsFrom::NsightExport,
        { "start", "end", "deviceId", "streamId", "correlationId", "demangledName", "shortName", "graphId" },
        { "start", "end", "deviceId", "streamId", "demangledName", "shortName" });
    if (auto ok = c.check(); !ok)
        return ok;
    KernelTable& t = context.model.kernels;
    auto reserved = reserve_rows(context, kTable.name, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id,
        t.name, t.short_name, t.graph_id);
    if (!reserved)
        return std::unexpected(reserved.error());
    const auto& strings = context.strings;
    auto rows = for_each_row(context.file, c, [&](Columns& row) {
        const int64_t start_ns = row.time(c["start"]);
        const int64_t end_ns = row.time(c["end"]);
        if (end_ns < start_ns) [[unlikely]]
            row.fail_row("negative duration");
        t.start_ns.push_back(start_ns);
        t.end_ns.push_back(end_ns);
        t.device_id.push_back(row.id32(c["deviceId"]));
        t.stream_id.push_back(row.id32(c["streamId"]));
        t.correlation_id.push_back(row.id32_or(c["correlationId"], 0)); // NULL: not correlated (nsys 3.28.1 allows it)
        t.name.push_back(string_ref(row, c["demangledName"], strings));
        t.short_name.push_back(string_ref(row, c["shortName"], strings));
        t.graph_id.push_back(row.id32_or(c["graphId"], 0));
    });
    if (!rows)
        return std::unexpected(rows.error());
    context.model.row_counts[std::string(kTable.name)] = *rows;
    return {};
}

} // namespace

Expected<void> read_nsight(const TraceFile& file, TraceModel& model)
{
    StringIdMap strings;
    ReadContext context { file, model, strings, Dialect::Nsight };
    if (auto ok = read_meta(context); !ok)
        return ok;
    if (auto ok = strings.load(file, model.strings); !ok)
        return ok;
    if (file.has_table(schema::table::kStringIds))
        model.row_counts[std::string(schema::table::kStringIds)] = static_cast<int64_t>(model.strings.size());
    if (auto ok = read_kernels_alongside(context, read_kernels, read_api_calls); !ok)
        return ok;
    for (auto read : { read_syncs, read_memcpys, read_memsets, read_nvtx, read_thread_names, read_gpus }) {
        if (auto ok = read(context); !ok)
            return ok;
    }
    return {};
}

} // namespace fp8scope::analyzer::detail
