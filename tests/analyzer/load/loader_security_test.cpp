// The reader's promises for untrusted files (docs/security.md), one test each: the connection's hardening as SQLite
// reports it, views and triggers in a trace never run, names from the file never spliced into SQL. Size caps are in
// loader_bad_input_test.cpp and loader_limits_test.cpp.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "load/sqlite_reader.hpp"
#include "loader_test_support.hpp"
#include "readonly_view.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

std::string written(const std::string& test_name)
{
    const std::string path = scratch_dir(test_name) + "/trace.sqlite";
    REQUIRE(full_scenario().write_fp8scope(path));
    return path;
}

int db_config(sqlite3* db, int option)
{
    int value = -1;
    REQUIRE(sqlite3_db_config(db, option, -1, &value) == SQLITE_OK);
    return value;
}

// The SQLite error of preparing and stepping `sql` on the reader's connection ("" when it ran).
std::string sqlite_refusal(const detail::TraceFile& file, const std::string& sql)
{
    auto statement = file.prepare(sql, "testing");
    if (!statement)
        return statement.error().message;
    auto stepped = statement->step();
    return stepped ? std::string() : stepped.error().message;
}

// The trace loads with full_scenario()'s content, and its directory is left byte for byte as it was.
void check_loads_unchanged(const std::string& path)
{
    const std::string dir = path.substr(0, path.rfind('/'));
    const auto before = directory_snapshot(dir);
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    check_common_content(*loaded);
    CHECK(directory_snapshot(dir) == before);
}

} // namespace

TEST_CASE("the reader's connection is read-only, defensive, without extensions, views, triggers or ATTACH",
    "[loader][security]")
{
    const std::string path = written("security_config");
    auto file = detail::TraceFile::open(path);
    REQUIRE(file);
    sqlite3* db = file->db();
    CHECK(db_config(db, SQLITE_DBCONFIG_DEFENSIVE) == 1);
    CHECK(db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA) == 0);
    CHECK(db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION) == 0);
    CHECK(db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER) == 0);
    CHECK(db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW) == 0);
    CHECK(db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE) == 1);
    CHECK(sqlite3_db_readonly(db, "main") == 1);
    CHECK(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1) == 64 * 1024 * 1024);
    CHECK(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1) == 0);
    // And what that means for statements on it.
    CHECK_THAT(
        sqlite_refusal(*file, "SELECT load_extension('/nonexistent/evil.so')"), Catch::Contains("not authorized"));
    CHECK_THAT(sqlite_refusal(*file, "ATTACH DATABASE ':memory:' AS other"), Catch::Contains("too many attached"));
    CHECK_THAT(sqlite_refusal(*file, "DELETE FROM FP8SCOPE_KERNEL"), Catch::Contains("readonly"));
    CHECK_THAT(sqlite_refusal(*file, "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"), Catch::Contains("view"));
}

TEST_CASE("views and triggers in a trace never run, and the file is left unchanged", "[loader][security]")
{
    // A trigger on every table the loader reads would fire only on a write, which the reader never makes; views
    // are never read (a view where a table belongs is refused, loader_bad_input_test.cpp).
    const std::string path = written("security_triggers");
    std::string sql;
    for (const char* table : { "FP8SCOPE_META", "StringIds", "FP8SCOPE_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME" })
        sql += "CREATE TRIGGER evil_" + std::string(table) + " AFTER INSERT ON " + table
            + " BEGIN SELECT load_extension('/nonexistent/evil.so'); END;";
    sql += "CREATE VIEW evil_view AS SELECT load_extension('/nonexistent/evil.so');";
    exec_sql(path, sql);
    check_loads_unchanged(path);
}

TEST_CASE("names in a trace never become SQL: hostile table names are inert", "[loader][security]")
{
    // The loader's SQL is built from its own table constants (quoted) and binds everything else.
    CHECK(detail::quoted_identifier("a\"b") == "\"a\"\"b\"");
    const std::string path = written("security_names");
    exec_sql(path,
        "CREATE TABLE \"FP8SCOPE_X\"\"; DROP TABLE StringIds; --\" (x INTEGER);"
        "CREATE TABLE \"CUPTI_ACTIVITY_KIND_'); DROP TABLE FP8SCOPE_META; --\" (x INTEGER);");
    check_loads_unchanged(path);
}

TEST_CASE("a row count the file could not hold is not used to size memory, and is refused", "[loader][security]")
{
    // rows_to_expect(): a recorded count above file size / 8 bytes per row is a lie; reserving it would ask for
    // petabytes. The rows are counted instead, then the lie is found by the row-count check.
    const std::string path = written("security_row_count");
    exec_sql(path, "UPDATE FP8SCOPE_META SET value = 1000000000000000 WHERE key = 'row_count.FP8SCOPE_KERNEL'");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path,
        "is corrupt: FP8SCOPE_KERNEL reads as 4 rows, but 1000000000000000 were written (row counts)");
}
