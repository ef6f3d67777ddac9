// SQLite's own scan of a trace (docs/benchmarks.md "The report against SQLite's own scan"): the floor that
// `fp8scope report` is measured against. Every row of every table the analyzer's loader reads, every column, on one
// thread, on the SQLite that fp8scope links, the file opened as the loader opens a closed trace (read-only, immutable,
// no mutex), two ways: summed inside SQLite (the floor: decoding the rows at all) and stepped through the C API with
// every value read as stored. Not a test: it prints the median times.
//
//   fp8scope_scan_bench [--runs N (3)] TRACE
#include "fp8scope/format/schema.hpp"

#include <CLI/CLI.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

// The tables the loader reads (analyzer/src/load/fp8scope_reader.cpp, activity_readers.cpp); a table the trace lacks is
// skipped.
std::vector<std::string> loader_tables()
{
    namespace t = fp8scope::schema::table;
    return { std::string(t::kMeta), std::string(t::kStringIds), std::string(t::kKernel), std::string(t::kKernelConfig),
        std::string(t::kKernelLatency), std::string(t::kRuntime), std::string(t::kMemcpy), std::string(t::kMemset),
        std::string(t::kSynchronization), std::string(t::kNvtxEvents), std::string(t::kThreadNames),
        std::string(t::kStepMarker), std::string(t::kScalar), std::string(t::kScalarNan), std::string(t::kTensorSite),
        std::string(t::kTensorStats), std::string(t::kTargetInfoGpu), std::string(t::kSessionStart),
        std::string(t::kOverhead), std::string(t::kDropped), std::string(t::kCollectorWork),
        std::string(t::kCaptureWindow) };
}

// What sums the values of each column of `table` inside SQLite: the number itself for a numeric column, the length
// of a text or blob one; empty when the trace lacks the table.
std::vector<std::pair<std::string, std::string>> sums_of(sqlite3* db, const std::string& table)
{
    std::vector<std::pair<std::string, std::string>> sums; // (quoted column, its sum)
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name, upper(type) FROM pragma_table_info(?)", -1, &stmt, nullptr) != SQLITE_OK)
        return sums;
    sqlite3_bind_text(stmt, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const std::string name = "\"" + std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) + "\"";
        const std::string_view type = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
        const bool text = type.find("TEXT") != std::string_view::npos || type.find("BLOB") != std::string_view::npos
            || type.find("CHAR") != std::string_view::npos;
        sums.emplace_back(name, text ? "sum(length(" + name + "))" : "sum(" + name + ")");
    }
    sqlite3_finalize(stmt);
    return sums;
}

// One table's read: its quoted columns, as the loader selects them (all of them when none were given).
struct TableRead {
    std::string table;
    std::vector<std::string> columns; // quoted, e.g. "\"start\""
};

// The loader's own `SELECT "a", "b" FROM "T"` lines, as FP8SCOPE_PRINT_SQL=1 prints them ("fp8scope sql: ..."); other
// lines and statements (PRAGMA, WHERE clauses) are skipped.
std::vector<TableRead> reads_from(const std::string& path)
{
    std::vector<TableRead> reads;
    std::FILE* in = std::fopen(path.c_str(), "r");
    if (!in)
        return reads;
    char line[4096];
    while (std::fgets(line, sizeof line, in)) {
        std::string_view text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.remove_suffix(1);
        constexpr std::string_view kPrefix = "fp8scope sql: SELECT \"";
        if (!text.starts_with(kPrefix) || text.find(" WHERE ") != std::string_view::npos)
            continue;
        text.remove_prefix(kPrefix.size() - 1);
        const size_t from = text.find(" FROM \"");
        if (from == std::string_view::npos || !text.ends_with("\""))
            continue;
        TableRead read;
        read.table = std::string(text.substr(from + 7, text.size() - from - 8));
        std::string_view columns = text.substr(0, from);
        for (size_t comma; (comma = columns.find(", ")) != std::string_view::npos; columns.remove_prefix(comma + 2))
            read.columns.emplace_back(columns.substr(0, comma));
        read.columns.emplace_back(columns);
        reads.push_back(std::move(read));
    }
    std::fclose(in);
    return reads;
}

struct Scan {
    double seconds = -1;
    int64_t rows = 0;
    uint64_t checksum = 0; // of every value read, so that no read is optimised away
    std::string error;
};

// Through the C API (`aggregate` false): every row stepped and every value read as stored, as a reader must. Inside
// SQLite (`aggregate` true): one `SELECT count(*), sum(c), ...` per table, every value decoded by SQLite's own
// VM with no call per value: the floor of decoding the rows at all.
Scan scan(const std::string& path, bool aggregate, const std::vector<TableRead>& reads)
{
    Scan result;
    sqlite3* db = nullptr;
    const std::string uri = "file:" + path + "?immutable=1";
    // As the loader opens it (analyzer/src/load/sqlite_reader.cpp): NOMUTEX, one thread per connection.
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr)
        != SQLITE_OK) {
        result.error = sqlite3_errmsg(db);
        sqlite3_close(db);
        return result;
    }
    const auto start = std::chrono::steady_clock::now();
    for (const TableRead& read : reads) {
        const std::string& table = read.table;
        sqlite3_stmt* stmt = nullptr;
        std::string sql = "SELECT ";
        for (size_t i = 0; i < read.columns.size(); ++i)
            sql += (i ? ", " : "") + read.columns[i];
        if (read.columns.empty())
            sql += "*";
        sql += " FROM \"" + table + "\"";
        if (aggregate) {
            sql = "SELECT count(*)";
            for (const auto& [column, sum] : sums_of(db, table))
                if (read.columns.empty() || std::ranges::find(read.columns, column) != read.columns.end())
                    sql += ", " + sum;
            sql += " FROM \"" + table + "\"";
        }
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
            continue; // not in this trace
        const int columns = sqlite3_column_count(stmt);
        while (sqlite3_step(stmt) == SQLITE_ROW) {
            if (aggregate) {
                result.rows += sqlite3_column_int64(stmt, 0);
                for (int c = 1; c < columns; ++c) // a sum past int64 is a double: its integer part is enough here
                    result.checksum += static_cast<uint64_t>(sqlite3_column_double(stmt, c));
                continue;
            }
            ++result.rows;
            for (int c = 0; c < columns; ++c) {
                switch (sqlite3_column_type(stmt, c)) {
                case SQLITE_INTEGER:
                    result.checksum += static_cast<uint64_t>(sqlite3_column_int64(stmt, c));
                    break;
                case SQLITE_FLOAT:
                    result.checksum += static_cast<uint64_t>(sqlite3_column_double(stmt, c));
                    break;
                case SQLITE_TEXT:
                case SQLITE_BLOB:
                    result.checksum += static_cast<uint64_t>(sqlite3_column_bytes(stmt, c));
                    break;
                default:
                    break;
                }
            }
        }
        sqlite3_finalize(stmt);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sqlite3_close(db);
    return result;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Times SQLite's own scan of every row and column the fp8scope loader reads from a trace" };
    int runs = 3;
    std::string trace, sql_log;
    app.add_option("--runs", runs, "Runs; the median is printed")->check(CLI::PositiveNumber);
    app.add_option("--sql", sql_log,
           "The loader's statements as FP8SCOPE_PRINT_SQL=1 printed them: only their tables and columns are scanned "
           "(default: every column of every table the loader reads)")
        ->check(CLI::ExistingFile);
    app.add_option("TRACE", trace, "Trace file")->required()->check(CLI::ExistingFile);
    CLI11_PARSE(app, argc, argv);
    std::vector<TableRead> reads;
    if (!sql_log.empty())
        reads = reads_from(sql_log);
    else
        for (const std::string& table : loader_tables())
            reads.push_back({ table, {} });
    if (reads.empty()) {
        std::fprintf(stderr, "%s: no SELECT of the loader in it\n", sql_log.c_str());
        return 1;
    }
    for (const bool aggregate : { true, false }) {
        std::vector<double> seconds;
        Scan last;
        for (int i = 0; i < runs; ++i) {
            last = scan(trace, aggregate, reads);
            if (last.seconds < 0) {
                std::fprintf(stderr, "%s: %s\n", trace.c_str(), last.error.c_str());
                return 1;
            }
            seconds.push_back(last.seconds);
        }
        std::ranges::sort(seconds);
        // The aggregate line first: report_bench.sh takes the first median as the floor.
        std::printf("sqlite scan %s: %lld rows, median %.3f s (min %.3f, max %.3f, %d runs; checksum %llu)\n",
            aggregate ? "inside SQLite (a sum per column)" : "through the C API (every value, one thread)",
            static_cast<long long>(last.rows), seconds[seconds.size() / 2], seconds.front(), seconds.back(), runs,
            static_cast<unsigned long long>(last.checksum));
    }
    return 0;
}
