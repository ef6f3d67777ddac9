// The nsys import path: the same scenario written in Nsight Systems' export layout loads with the same content,
// and the nsys-specific cases (nullable columns, sentinels, sparse string ids, views, lazily created tables).
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

TEST_CASE("the scenario in Nsight Systems layout loads with the same content", "[loader][nsight]")
{
    const std::string path = scratch_dir("nsight_full") + "/full.nsys.sqlite";
    REQUIRE(full_scenario().write_nsight(path));
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    const TraceModel& model = *loaded;
    check_common_content(model);

    const TraceMeta& meta = model.meta;
    CHECK(meta.source == TraceSource::Nsight);
    CHECK(meta.producer == "Nsight Systems export (schema 3.28.1)");
    CHECK(meta.schema_major == 3);
    CHECK(meta.schema_minor == 28);
    CHECK(meta.finished);
    CHECK(meta.host == "scenario-host");
    CHECK(meta.session_start_utc_ns == 1'795'219'200'000'000'000);
    CHECK(meta.raw.at("EXPORT_SCHEMA_VERSION") == "3.28.1");

    // nsys has no tensor statistics, scalars, step markers or collector overhead.
    CHECK(model.tensor_sites.empty());
    CHECK(model.tensor_stats.empty());
    CHECK(model.scalars.empty());
    CHECK(model.step_markers.empty());
    CHECK(model.overheads.empty());
    CHECK(model.dropped.empty());
    CHECK(model.row_counts.at("CUPTI_ACTIVITY_KIND_KERNEL") == 4);
    CHECK(model.row_counts.at("NVTX_EVENTS") == 3);
    CHECK_FALSE(model.row_counts.contains("FP8SCOPE_KERNEL"));
}

TEST_CASE("an nsys export with only some tables loads the rest as empty", "[loader][nsight]")
{
    // nsys creates tables lazily: a report without CUDA trace has no CUPTI_ACTIVITY_KIND_* table at all.
    const std::string path = scratch_dir("nsight_lazy") + "/nvtx_only.sqlite";
    exec_sql(path,
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,"
        "  globalTid INTEGER, textId INTEGER, eventId INTEGER NOT NULL PRIMARY KEY);"
        "INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, 'forward', 1, NULL, 1);");
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.source == TraceSource::Nsight);
    CHECK(loaded->meta.producer == "Nsight Systems export (schema unknown)");
    CHECK(loaded->kernels.size() == 0);
    CHECK(loaded->api_calls.size() == 0);
    REQUIRE(loaded->nvtx.size() == 1);
    CHECK(loaded->strings[loaded->nvtx.text[0]] == "forward");
}

TEST_CASE("nsys specifics: sparse string ids, -1 NVTX ends, non-activity NVTX rows, NULL columns", "[loader][nsight]")
{
    const std::string path = scratch_dir("nsight_specifics") + "/specifics.sqlite";
    // Ids 5 and 2^40 force the hashed id lookup; eventType 75 (NVTX domain create) is not activity; a mark with
    // end -1 has no end; NULL correlationId, globalTid, graphId and memory kinds read as "not recorded".
    exec_sql(path,
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES (5, 'kernel_a'), (1099511627776, 'cudaLaunchKernel_v7000');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        "  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
        "  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (300, 400, 0, 7, NULL, 5, 5), (100, 200, 0, 7, 9, 5, 5);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        "  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, NULL, 9, 1099511627776, 0);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        "  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, value INTEGER NOT NULL,"
        "  bytes INTEGER NOT NULL, memKind INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (500, 510, 0, 7, NULL, 0, 64, NULL);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,"
        "  globalTid INTEGER, textId INTEGER, domainId INTEGER, eventId INTEGER NOT NULL PRIMARY KEY);"
        "INSERT INTO NVTX_EVENTS VALUES (0, NULL, 75, 'my domain', 1, NULL, 1, 1),"
        "  (150, -1, 34, 'mark', 1, NULL, 0, 2), (120, 180, 60, NULL, 1, 5, 0, 3);");
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    const TraceModel& model = *loaded;

    REQUIRE(model.kernels.size() == 2);
    CHECK(model.kernels.start_ns == std::vector<int64_t> { 100, 300 });
    CHECK(model.kernels.correlation_id == std::vector<uint32_t> { 9, 0 });
    CHECK(model.kernels.graph_id == std::vector<uint32_t> { 0, 0 });
    CHECK(model.strings[model.kernels.name[0]] == "kernel_a");
    REQUIRE(model.api_calls.size() == 1);
    CHECK(model.strings[model.api_calls.name[0]] == "cudaLaunchKernel_v7000");
    CHECK(model.api_calls.global_tid[0] == 0);
    CHECK(model.api_calls.is_driver[0] == 0);
    REQUIRE(model.memsets.size() == 1);
    CHECK(model.memsets.mem_kind[0] == static_cast<int32_t>(schema::MemoryKind::Unknown));
    CHECK(model.memsets.correlation_id[0] == 0);

    REQUIRE(model.nvtx.size() == 2);
    CHECK(model.nvtx.start_ns == std::vector<int64_t> { 120, 150 });
    CHECK(model.nvtx.end_ns == std::vector<int64_t> { 180, NvtxTable::kNoEnd });
    CHECK(model.strings[model.nvtx.text[0]] == "kernel_a");
    CHECK(model.strings[model.nvtx.text[1]] == "mark");
    CHECK(model.row_counts.at("NVTX_EVENTS") == 3);
}

TEST_CASE("a view planted where an nsys table belongs is not read", "[loader][nsight]")
{
    // A hostile file could make a "table" an expensive or misleading view. The loader reads objects whose
    // sqlite_schema type is 'table' only, and queries with views disabled: a view counts as an absent table, so
    // the file loads with that table empty.
    const std::string path = scratch_dir("nsight_view") + "/view.sqlite";
    REQUIRE(full_scenario().write_nsight(path));
    exec_sql(path,
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
        "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
        "  SELECT i AS start, i AS end, 0 AS deviceId, 0 AS streamId, 0 AS correlationId, 0 AS demangledName,"
        "  0 AS shortName FROM n;");
    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->kernels.size() == 0);
    CHECK_FALSE(loaded->row_counts.contains("CUPTI_ACTIVITY_KIND_KERNEL"));
    CHECK(loaded->api_calls.size() == 13);
}

TEST_CASE("bad nsys content is refused with the table, column and row", "[loader][nsight]")
{
    const std::string dir = scratch_dir("nsight_bad");
    SECTION("end before start")
    {
        const std::string path = dir + "/negative.sqlite";
        REQUIRE(full_scenario().write_nsight(path));
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1 WHERE rowid = 2;");
        check_error(
            load_trace(path), ErrorCode::InvalidTrace, path, "negative duration in CUPTI_ACTIVITY_KIND_RUNTIME row 2");
    }
    SECTION("dangling string id")
    {
        const std::string path = dir + "/dangling.sqlite";
        REQUIRE(full_scenario().write_nsight(path));
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 999999 WHERE rowid = 3;");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "dangling string id 999999 in CUPTI_ACTIVITY_KIND_KERNEL.shortName (row 3)");
    }
    SECTION("a needed column is missing")
    {
        const std::string path = dir + "/no_column.sqlite";
        REQUIRE(full_scenario().write_nsight(path));
        exec_sql(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN shortName;");
        check_error(
            load_trace(path), ErrorCode::InvalidTrace, path, "CUPTI_ACTIVITY_KIND_KERNEL lacks column shortName");
    }
    SECTION("NULL in a NOT NULL nsys column that a hand-made file left nullable")
    {
        const std::string path = dir + "/null_start.sqlite";
        exec_sql(path,
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
            "  streamId INTEGER, bytes INTEGER, copyKind INTEGER);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 2, 0, 7, 10, 1), (NULL, 2, 0, 7, 10, 1);");
        check_error(
            load_trace(path), ErrorCode::InvalidTrace, path, "NULL in CUPTI_ACTIVITY_KIND_MEMCPY.start (row 2)");
    }
}
