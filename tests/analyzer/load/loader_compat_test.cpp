// Every schema version ever written loads with the current reader (docs/trace-format.md "Versions"): one committed
// trace per version, written by the collector or the scenario builder of its time, read with its content checked
// against counts taken with plain SQL and against pinned figures. samples/traces/compat/README.md says which commit
// wrote the trace that exists only for this test.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"

#include "fp8scope/format/schema.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

struct VersionedTrace {
    const char* path; // under samples/traces/
    int minor; // schema 1.minor
    int64_t kernels, api_calls, syncs, nvtx; // rows of the tables, as sqlite3 counts them
    bool capture_window_table;
    const char* first_kernel; // short name of the earliest kernel
};

// Figures read off each file with the sqlite3 shell (SELECT count(*) ...; the first kernel by start).
const VersionedTrace kTraces[] = {
    { "h100-sample-syncs.sqlite", 0, 100, 223, 60, 20, false, "fp8scope_spin" },
    { "realjobs/h100-ddp-gloo-rank0.sqlite", 1, 1068, 2603, 652, 0, false, "CatArrayBatchedCopy_vectorized" },
    { "compat/schema-1.2-fa44e89.sqlite", 2, 78, 84, 3, 12, false, "cast_transpose_kernel" },
    { "capture/h100-profiler-range.sqlite", 2, 240, 240, 0, 0, true,
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
        "kernel__5x_cublas" },
    { "compat/schema-1.3-44f49ee.sqlite", 3, 78, 84, 3, 12, true, "cast_transpose_kernel" },
    { "compat/schema-1.4-75c7b0c.sqlite", 4, 78, 84, 3, 12, true, "cast_transpose_kernel" },
    { "compat/schema-1.5-148192c.sqlite", 5, 78, 84, 3, 12, true, "cast_transpose_kernel" },
    { "compat/schema-1.6-a97d360.sqlite", 6, 78, 84, 3, 12, true, "cast_transpose_kernel" },
    { "scenario-demo.sqlite", 7, 78, 84, 3, 12, true, "cast_transpose_kernel" },
};

// Each table's rows by a plain immutable connection: what the file holds, read without the loader.
std::vector<std::pair<std::string, int64_t>> plain_row_counts(const std::string& path)
{
    sqlite3* db = nullptr;
    const std::string uri = "file:" + path + "?immutable=1";
    REQUIRE(sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) == SQLITE_OK);
    std::vector<std::string> tables;
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'ENUM_%'", -1,
                &stmt, nullptr)
        == SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW)
        tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    sqlite3_finalize(stmt);
    std::vector<std::pair<std::string, int64_t>> counts;
    for (const std::string& table : tables) {
        REQUIRE(sqlite3_prepare_v2(db, ("SELECT count(*) FROM \"" + table + "\"").c_str(), -1, &stmt, nullptr)
            == SQLITE_OK);
        REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
        counts.emplace_back(table, sqlite3_column_int64(stmt, 0));
        sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return counts;
}

int64_t read_rows(const TraceModel& model, const std::string& table)
{
    const auto it = model.row_counts.find(table);
    return it == model.row_counts.end() ? -1 : it->second;
}

} // namespace

TEST_CASE("a trace of every schema version ever written loads with the current reader", "[loader][compat]")
{
    std::vector<int> minors_seen;
    for (const VersionedTrace& trace : kTraces) {
        const std::string path = std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + trace.path;
        INFO(trace.path);
        const auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK(loaded->meta.schema_major == 1);
        CHECK(loaded->meta.schema_minor == trace.minor);
        CHECK(loaded->meta.finished);
        CHECK(read_rows(*loaded, "FP8SCOPE_KERNEL") == trace.kernels);
        CHECK(read_rows(*loaded, "CUPTI_ACTIVITY_KIND_RUNTIME") == trace.api_calls);
        CHECK(read_rows(*loaded, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == trace.syncs);
        CHECK(read_rows(*loaded, "NVTX_EVENTS") == trace.nvtx);
        CHECK((read_rows(*loaded, "FP8SCOPE_CAPTURE_WINDOW") >= 0) == trace.capture_window_table);
        // The loader moves the collector's own kernels out of `kernels`; together they are every row.
        const auto collector_kernels
            = std::ranges::count(loaded->collector_work.kind, CollectorWorkTable::Kind::Kernel);
        CHECK(static_cast<int64_t>(loaded->kernels.size()) + collector_kernels == trace.kernels);
        REQUIRE(loaded->kernels.size() > 0);
        CHECK(loaded->strings[loaded->kernels.short_name[0]] == trace.first_kernel);
        // Every table the reader read, it read whole.
        for (const auto& [table, rows] : plain_row_counts(path)) {
            INFO(table);
            if (const int64_t read = read_rows(*loaded, table); read >= 0)
                CHECK(read == rows);
        }
        minors_seen.push_back(trace.minor);
    }
    // One trace at least for each minor version up to the current one.
    for (int minor = 0; minor <= schema::kMinorVersion; ++minor)
        CHECK(std::ranges::count(minors_seen, minor) > 0);
}

TEST_CASE("a 1.6 trace, without FP8SCOPE_STEP_MARKER.source, reads its step markers as the job's", "[loader][compat]")
{
    const auto loaded = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/compat/schema-1.6-a97d360.sqlite");
    REQUIRE(loaded);
    REQUIRE(loaded->step_markers.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(loaded->step_markers[i].step == int64_t(i));
        CHECK(loaded->step_markers[i].source == StepMarkerSource::Job);
    }
}

TEST_CASE(
    "a newer minor version's additions are ignored: a table, a column, a meta key, an enum value", "[loader][compat]")
{
    const std::string path = scratch_dir("compat_newer_minor") + "/trace.sqlite";
    REQUIRE(full_scenario().write_fp8scope(path));
    exec_sql(path,
        "PRAGMA user_version = 65544;" // 1.8, newer than this reader
        "UPDATE FP8SCOPE_META SET value = '1.8' WHERE key = 'schema_version';"
        "INSERT INTO FP8SCOPE_META (key, value) VALUES ('future_key', 'x');"
        "CREATE TABLE FP8SCOPE_FUTURE (id INTEGER PRIMARY KEY, payload BLOB);"
        "ALTER TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ADD COLUMN futureFlag INTEGER;"
        "INSERT INTO FP8SCOPE_DROPPED (timestamp, source, count) VALUES (5, 99, 3);"
        "UPDATE FP8SCOPE_META SET value = value + 1 WHERE key = 'row_count.FP8SCOPE_DROPPED';");
    const auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->meta.schema_minor == 8);
    CHECK(loaded->meta.raw.at("future_key") == "x");
    check_common_content(*loaded);
    // The unknown drop source is kept as its number and counted.
    REQUIRE_FALSE(loaded->dropped.empty());
    CHECK(std::ranges::count_if(loaded->dropped, [](const Dropped& d) { return d.source == 99 && d.count == 3; }) == 1);
}
