// Bad inputs: each gives the right ErrorCode and one line that names the file (docs/security.md "The reader":
// truncated, corrupt, empty, wrong-version or hostile files get one clear line, never a crash).
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// A finished trace of full_scenario() at dir/name, to be broken by the caller.
std::string written_trace(const std::string& dir, const std::string& name)
{
    const std::string path = dir + "/" + name;
    REQUIRE(full_scenario().write_fp8scope(path));
    return path;
}

} // namespace

TEST_CASE("a missing path is an I/O error", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_missing") + "/nowhere.sqlite";
    auto result = load_trace(path);
    check_error(result, ErrorCode::Io, path, "No such file or directory");
    CHECK(result.error().message == "cannot open trace '" + path + "': No such file or directory");
}

TEST_CASE("a directory is an I/O error", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_directory");
    check_error(load_trace(path), ErrorCode::Io, path, "Is a directory");
}

TEST_CASE("an empty file is not a trace", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_empty") + "/empty.sqlite";
    write_file(path, "");
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "is empty");
    CHECK(result.error().message == "trace '" + path + "' is empty");
}

TEST_CASE("a text file is not a trace", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_text") + "/notes.txt";
    write_file(path, "start,end\n1,2\nthis is not SQLite\n");
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "not an SQLite database");
    CHECK(result.error().message
        == "'" + path + "' is not an fp8scope trace or Nsight Systems export: not an SQLite database");
}

TEST_CASE("random bytes are not a trace", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_random") + "/random.bin";
    std::mt19937_64 random(20261121);
    std::string bytes(64 * 1024, '\0');
    for (char& c : bytes)
        c = static_cast<char>(random() & 0xFF);
    write_file(path, bytes);
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "not an SQLite database");
}

TEST_CASE("an SQLite file without trace tables is not a trace", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_other_db") + "/other.sqlite";
    exec_sql(path, "CREATE TABLE contacts (name TEXT, phone TEXT); INSERT INTO contacts VALUES ('a', 'b');");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "(no known tables)");
}

TEST_CASE("a truncated trace is refused, never half-loaded", "[loader][bad]")
{
    const std::string dir = scratch_dir("bad_truncated");
    const std::string full = dir + "/full.sqlite";
    Scenario s;
    const HostThread host = s.thread(1, 1);
    for (int64_t i = 0; i < 20000; ++i) {
        s.launch(host, { .api_start_ns = i * 100, .api_end_ns = i * 100 + 5 },
            { .start_ns = i * 100 + 10, .end_ns = i * 100 + 60, .name = "kernel_" + std::to_string(i % 50) });
    }
    REQUIRE(s.write_fp8scope(full));
    REQUIRE(load_trace(full)); // the intact file is fine

    const auto size = std::filesystem::file_size(full);
    REQUIRE(size > 200 * 1024); // spans many pages
    std::string bytes(size, '\0');
    std::ifstream(full, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
    const std::string truncated = dir + "/truncated.sqlite";
    write_file(truncated, bytes.substr(0, size / 2));
    check_error(load_trace(truncated), ErrorCode::InvalidTrace, truncated, "corrupt or truncated");
}

TEST_CASE("a newer schema major version is refused, naming both versions", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_newer"), "newer.sqlite");
    exec_sql(path,
        "PRAGMA user_version = 131072;" // 2 << 16: version 2.0
        "UPDATE FP8SCOPE_META SET value = '2.0' WHERE key = 'schema_version';");
    auto result = load_trace(path);
    check_error(result, ErrorCode::NewerVersion, path, "2.0");
    CHECK(result.error().message
        == "trace '" + path + "' has schema version 2.0, newer than this fp8scope reads (1.7); use a newer fp8scope");
}

TEST_CASE("a newer minor version loads", "[loader]")
{
    // Minor versions only add tables, columns and enum values (schema.hpp), so a 1.9 trace is read by this reader.
    const std::string path = written_trace(scratch_dir("newer_minor"), "minor.sqlite");
    exec_sql(path,
        "PRAGMA user_version = 65545;" // 1.9
        "UPDATE FP8SCOPE_META SET value = '1.9' WHERE key = 'schema_version';"
        "ALTER TABLE FP8SCOPE_KERNEL ADD COLUMN futureColumn INTEGER;"
        "CREATE TABLE FP8SCOPE_FUTURE_TABLE (x INTEGER);");
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_major == 1);
    CHECK(loaded->meta.schema_minor == 9);
    check_common_content(*loaded);
}

TEST_CASE("PRAGMA user_version and the meta table must agree", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_version_mismatch"), "mismatch.sqlite");
    exec_sql(path, "UPDATE FP8SCOPE_META SET value = '1.8' WHERE key = 'schema_version';");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path,
        "PRAGMA user_version says 1.7 but FP8SCOPE_META schema_version says 1.8");
}

TEST_CASE("a 1.0 trace, written before FP8SCOPE_COLLECTOR_WORK, loads without it", "[loader]")
{
    const std::string path = written_trace(scratch_dir("older_minor"), "v1_0.sqlite");
    exec_sql(path,
        "PRAGMA user_version = 65536;" // 1.0
        "UPDATE FP8SCOPE_META SET value = '1.0' WHERE key = 'schema_version';"
        "DROP TABLE FP8SCOPE_COLLECTOR_WORK;");
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_minor == 0);
    CHECK(loaded->collector_correlation_ids.empty());
    check_common_content(*loaded);
}

TEST_CASE("a trace missing a table is refused", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_missing_table"), "no_memset.sqlite");
    exec_sql(path, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;");
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "lacks table CUPTI_ACTIVITY_KIND_MEMSET");
    CHECK(result.error().message == "trace '" + path + "' lacks table CUPTI_ACTIVITY_KIND_MEMSET");
}

TEST_CASE("a view where one of our tables belongs counts as a missing table", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_view"), "view.sqlite");
    exec_sql(path,
        "DROP TABLE FP8SCOPE_DROPPED;"
        "CREATE VIEW FP8SCOPE_DROPPED AS SELECT 0 AS timestamp, 0 AS source, 1 AS count, NULL AS deviceId;");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "lacks table FP8SCOPE_DROPPED");
}

TEST_CASE("a trace missing a column is refused", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_missing_column"), "no_column.sqlite");
    exec_sql(path, "ALTER TABLE FP8SCOPE_SCALAR DROP COLUMN globalTid;");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "FP8SCOPE_SCALAR lacks column globalTid");
}

TEST_CASE("NULL where a value belongs is refused with table, column and row", "[loader][bad]")
{
    // Our tables declare NOT NULL, so the test rebuilds the runtime table without the constraint, as a hostile
    // or hand-edited file could.
    const std::string path = written_trace(scratch_dir("bad_null"), "null.sqlite");
    exec_sql(path,
        "ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME RENAME TO old_runtime;"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, \"end\" INTEGER, eventClass INTEGER,"
        "  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT start, \"end\", eventClass, globalTid, correlationId,"
        "  nameId, returnValue FROM old_runtime ORDER BY rowid;"
        "DROP TABLE old_runtime;"
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = NULL WHERE rowid = 2;");
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "NULL in CUPTI_ACTIVITY_KIND_RUNTIME.end (row 2)");
    CHECK(result.error().message == "trace '" + path + "': NULL in CUPTI_ACTIVITY_KIND_RUNTIME.end (row 2)");
}

TEST_CASE("a value of the wrong type or out of range is refused", "[loader][bad]")
{
    const std::string dir = scratch_dir("bad_values");
    SECTION("text where an integer belongs")
    {
        const std::string path = written_trace(dir, "text.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET streamId = 'seven' WHERE rowid = 2;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "text where an integer belongs in FP8SCOPE_KERNEL.streamId (row 2)");
    }
    SECTION("a negative device id")
    {
        const std::string path = written_trace(dir, "device.sqlite");
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = -3 WHERE rowid = 1;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "value -3 out of range in CUPTI_ACTIVITY_KIND_MEMCPY.deviceId (row 1)");
    }
    SECTION("a correlation id beyond uint32")
    {
        const std::string path = written_trace(dir, "correlation.sqlite");
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 4294967296 WHERE rowid = 3;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "value 4294967296 out of range in CUPTI_ACTIVITY_KIND_RUNTIME.correlationId (row 3)");
    }
    SECTION("a graph id beyond uint32 (CUPTI's graphId is 32 bits; the model keeps 4 bytes)")
    {
        const std::string path = written_trace(dir, "graph.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET graphId = 4294967296 WHERE rowid = 2;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "value 4294967296 out of range in FP8SCOPE_KERNEL.graphId (row 2)");
    }
    SECTION("a negative count")
    {
        const std::string path = written_trace(dir, "count.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_DROPPED SET count = -1 WHERE rowid = 1;");
        check_error(
            load_trace(path), ErrorCode::InvalidTrace, path, "value -1 out of range in FP8SCOPE_DROPPED.count (row 1)");
    }
    SECTION("a histogram that is not whole uint64 counts")
    {
        const std::string path = written_trace(dir, "histogram.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_TENSOR_STATS SET exponentHistogram = x'010203' WHERE rowid = 1;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path, "FP8SCOPE_TENSOR_STATS.exponentHistogram (row 1)");
    }
}

TEST_CASE("a negative duration is refused", "[loader][bad]")
{
    const std::string path = written_trace(scratch_dir("bad_duration"), "negative.sqlite");
    exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET duration = -5;");
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "negative duration in FP8SCOPE_KERNEL row 1");
}

TEST_CASE("dangling references are refused", "[loader][bad]")
{
    const std::string dir = scratch_dir("bad_dangling");
    SECTION("an API name")
    {
        const std::string path = written_trace(dir, "api_name.sqlite");
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 999999 WHERE rowid = 3;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "dangling string id 999999 in CUPTI_ACTIVITY_KIND_RUNTIME.nameId (row 3)");
    }
    SECTION("a kernel name")
    {
        const std::string path = written_trace(dir, "kernel_name.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_KERNEL_CONFIG SET demangledName = 99 WHERE rowid = 3;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "dangling string id 99 in FP8SCOPE_KERNEL_CONFIG.demangledName (row 3)");
    }
    SECTION("a kernel configuration")
    {
        const std::string path = written_trace(dir, "config.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET configId = 4242 WHERE rowid = 4;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "dangling configId 4242 in FP8SCOPE_KERNEL.configId (row 4)");
    }
    SECTION("a tensor site")
    {
        const std::string path = written_trace(dir, "site.sqlite");
        exec_sql(path, "UPDATE FP8SCOPE_TENSOR_STATS SET siteId = 77 WHERE rowid = 2;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "dangling site id 77 in FP8SCOPE_TENSOR_STATS.siteId (row 2)");
    }
}

TEST_CASE("a value beyond the size cap is refused instead of allocated", "[loader][bad]")
{
    // The loader caps strings and blobs at 64 MiB (SQLITE_LIMIT_LENGTH), so a hostile file cannot make it
    // allocate without bound.
    const std::string path = written_trace(scratch_dir("bad_huge_value"), "huge.sqlite");
    exec_sql(path, "UPDATE StringIds SET value = printf('%.*c', 70000000, 'x') WHERE id = 1;");
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, "holds a value larger than 64 MiB");
}

TEST_CASE("error messages stay on one line whatever the path", "[loader][bad]")
{
    const std::string path = scratch_dir("bad_newline") + "/two\nlines.sqlite";
    write_file(path, "not a database, and a name with a newline");
    auto result = load_trace(path);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::InvalidTrace);
    CHECK(result.error().message.find('\n') == std::string::npos);
    CHECK(result.error().message.find("two\\nlines.sqlite") != std::string::npos);
}

TEST_CASE("a path starting with file: is a file name, not an SQLite URI", "[loader]")
{
    // This SQLite is built with SQLITE_USE_URI=1; "file:x?mode=rwc" must not be parsed as a URI.
    const std::string dir = scratch_dir("uri_name");
    REQUIRE(full_scenario().write_fp8scope(dir + "/file:trace.sqlite"));
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    auto loaded = load_trace("file:trace.sqlite");
    auto missing = load_trace("file:absent.sqlite?mode=rwc");
    std::filesystem::current_path(cwd);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->kernels.size() == 4);
    check_error(missing, ErrorCode::Io, "file:absent.sqlite?mode=rwc", "No such file or directory");
    CHECK_FALSE(std::filesystem::exists(dir + "/file:absent.sqlite"));
}
