// Values a trace cannot truthfully hold, written with the scenario builder (docs/analysis.md "Values the loader
// refuses or clips"): times near the int64 limits and end-before-start spans are refused; kernels that overlap on
// one stream are clipped and counted; counts above a tensor's numel are refused; a b-tree that silently lost rows
// is found by PRAGMA quick_check. The loader never writes beside the trace.
#include "corrupt_page.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// One thread launching `kernels` kernels of 50 ns, 100 ns apart, on stream 7.
Scenario kernels_scenario(int kernels)
{
    Scenario s;
    const HostThread host = s.thread(1, 1);
    for (int64_t i = 0; i < kernels; ++i)
        s.launch(host, { .api_start_ns = i * 100, .api_end_ns = i * 100 + 5 },
            { .start_ns = i * 100 + 10, .end_ns = i * 100 + 60, .name = "kernel_" + std::to_string(i % 7) });
    return s;
}

std::string written(const Scenario& s, const std::string& test_name)
{
    const std::string path = scratch_dir(test_name) + "/trace.sqlite";
    const auto ok = s.write_fp8scope(path);
    INFO((ok ? std::string() : ok.error().message));
    REQUIRE(ok);
    return path;
}

// REQUIREs `s` to be refused as an invalid trace with `fragment` in the message.
void check_refused(const Scenario& s, const std::string& test_name, const std::string& fragment)
{
    const std::string path = written(s, test_name);
    check_error(load_trace(path), ErrorCode::InvalidTrace, path, fragment);
}

std::set<std::string> files_in(const std::string& dir)
{
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        names.insert(entry.path().filename().string());
    return names;
}

// Rows of `table` as a plain SQLite connection counts them (no check of the file's structure).
int64_t plain_count(const std::string& path, const std::string& table)
{
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &stmt, nullptr) == SQLITE_OK);
    const int rc = sqlite3_step(stmt);
    const int64_t rows = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return rows;
}

} // namespace

TEST_CASE("times beyond 2^53 ns from the session start are refused in every table", "[loader][bad][limits]")
{
    SECTION("a kernel start near INT64_MAX")
    {
        Scenario s = kernels_scenario(3);
        s.orphan_kernel({ .start_ns = kInt64Max - 100, .end_ns = kInt64Max - 50 });
        check_refused(s, "limits_kernel",
            "time 9223372036854775707 ns out of range (more than 2^53 ns, about 104 days, from the session start) "
            "in FP8SCOPE_KERNEL.start");
    }
    SECTION("a kernel whose start is in range but whose end is not")
    {
        Scenario s = kernels_scenario(1);
        s.orphan_kernel({ .start_ns = kMaxTraceTimeNs - 10, .end_ns = kMaxTraceTimeNs + 10 });
        check_refused(s, "limits_kernel_end",
            "time 9007199254741002 ns out of range (more than 2^53 ns, about 104 days, from the session start) in "
            "FP8SCOPE_KERNEL.duration");
    }
    SECTION("an API call ending at INT64_MAX")
    {
        Scenario s = kernels_scenario(1);
        s.api_call(s.thread(1, 1), { .api_start_ns = 0, .api_end_ns = kInt64Max, .name = "cudaMalloc_v3020" });
        check_refused(s, "limits_api", "in CUPTI_ACTIVITY_KIND_RUNTIME.end");
    }
    SECTION("an NVTX range starting at INT64_MIN")
    {
        Scenario s = kernels_scenario(1);
        s.nvtx_range(s.thread(1, 1), kInt64Min, 0, "train_step");
        check_refused(s, "limits_nvtx", "in NVTX_EVENTS.start");
    }
    SECTION("a step marker far in the future")
    {
        Scenario s = kernels_scenario(1);
        s.step_marker(s.thread(1, 1), kMaxTraceTimeNs + 1, 7);
        check_refused(s, "limits_marker", "in FP8SCOPE_STEP_MARKER.timestamp");
    }
    SECTION("the same limit in an Nsight Systems export")
    {
        Scenario s = kernels_scenario(2);
        s.orphan_kernel({ .start_ns = -kMaxTraceTimeNs - 1, .end_ns = 0 });
        const std::string path = scratch_dir("limits_nsight") + "/export.sqlite";
        REQUIRE(s.write_nsight(path));
        check_error(load_trace(path), ErrorCode::InvalidTrace, path, "in CUPTI_ACTIVITY_KIND_KERNEL.start");
    }
    SECTION("2^53 ns itself is accepted")
    {
        Scenario s = kernels_scenario(1);
        s.orphan_kernel({ .start_ns = kMaxTraceTimeNs - 10, .end_ns = kMaxTraceTimeNs });
        const auto loaded = load_trace(written(s, "limits_edge"));
        REQUIRE(loaded);
        CHECK(loaded->kernels.end_ns.back() == kMaxTraceTimeNs);
    }
}

TEST_CASE("an end before its start is refused", "[loader][bad][limits]")
{
    SECTION("a kernel")
    {
        Scenario s = kernels_scenario(2);
        s.orphan_kernel({ .start_ns = 500, .end_ns = 400 });
        check_refused(s, "span_kernel", "negative duration in FP8SCOPE_KERNEL row 3");
    }
    SECTION("an API call")
    {
        Scenario s = kernels_scenario(1);
        s.api_call(s.thread(1, 1), { .api_start_ns = 900, .api_end_ns = 899, .name = "cudaMalloc_v3020" });
        check_refused(s, "span_api", "negative duration in CUPTI_ACTIVITY_KIND_RUNTIME row 2");
    }
    SECTION("a sync")
    {
        Scenario s = kernels_scenario(1);
        s.sync(s.thread(1, 1), 300, 200, schema::SyncType::StreamSynchronize, 7u);
        check_refused(s, "span_sync", "negative duration in CUPTI_ACTIVITY_KIND_");
    }
    SECTION("an NVTX range")
    {
        Scenario s = kernels_scenario(1);
        s.nvtx_range(s.thread(1, 1), 1000, 10, "train_step");
        check_refused(s, "span_nvtx", "negative duration in NVTX_EVENTS row 1");
    }
}

TEST_CASE("kernels overlapping on one stream are clipped to start where the previous one ended", "[loader][limits]")
{
    Scenario s;
    const HostThread host = s.thread(1, 1);
    s.launch(host, { .api_start_ns = 0, .api_end_ns = 5 }, { .start_ns = 100, .end_ns = 200, .name = "a" });
    s.launch(host, { .api_start_ns = 10, .api_end_ns = 15 }, { .start_ns = 150, .end_ns = 260, .name = "b" }); // 50
    s.launch(host, { .api_start_ns = 20, .api_end_ns = 25 }, { .start_ns = 170, .end_ns = 190, .name = "c" }); // 20
    // Another stream and a CUDA graph's kernels may overlap: they are not clipped.
    s.launch(host, { .api_start_ns = 30, .api_end_ns = 35 },
        { .start_ns = 120, .end_ns = 300, .name = "other_stream", .stream_id = 9 });
    s.launch(host, { .api_start_ns = 40, .api_end_ns = 45 },
        { .start_ns = 110, .end_ns = 180, .name = "graph_branch", .graph_id = 3 });
    const auto loaded = load_trace(written(s, "overlap"));
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK(loaded->clipped_kernels.count == 2);
    CHECK(loaded->clipped_kernels.clipped_ns == 50 + 20);
    const KernelTable& k = loaded->kernels;
    REQUIRE(k.size() == 5);
    CHECK(std::ranges::is_sorted(k.start_ns)); // the invariant holds after the clip
    for (size_t i = 0; i < k.size(); ++i) {
        const std::string_view name = loaded->strings[k.name[i]];
        INFO(name);
        if (name == "b") {
            CHECK(k.start_ns[i] == 200); // where a ended
            CHECK(k.end_ns[i] == 260);
        } else if (name == "c") {
            CHECK(k.start_ns[i] == 260); // ran inside b: zero length at b's end
            CHECK(k.end_ns[i] == 260);
        } else if (name == "other_stream") {
            CHECK(k.start_ns[i] == 120);
        } else if (name == "graph_branch") {
            CHECK(k.start_ns[i] == 110);
        }
    }
    // A trace without overlaps is left alone.
    const auto clean = load_trace(written(kernels_scenario(10), "overlap_none"));
    REQUIRE(clean);
    CHECK(clean->clipped_kernels.count == 0);
}

TEST_CASE("a tensor count above its numel is refused", "[loader][bad][limits]")
{
    Scenario s = kernels_scenario(1);
    const int64_t site = s.tensor_site("x", schema::TensorRole::Input, schema::Dtype::BFloat16, 10, 100);
    TensorStatsRow row;
    row.site_id = site;
    row.timestamp_ns = 50;
    row.dtype = schema::Dtype::BFloat16;
    row.target_format = schema::Fp8Format::E4M3;
    row.numel = 1000;
    row.amax = 1;
    SECTION("saturated")
    {
        row.saturated = 1001;
        s.tensor_stats(row);
        check_refused(s, "count_saturated", "count 1001 above numel 1000 in FP8SCOPE_TENSOR_STATS.saturated (row 1)");
    }
    SECTION("NaN and Inf together")
    {
        row.nans = 600;
        row.infs = 600;
        s.tensor_stats(row);
        check_refused(s, "count_nonfinite", "nans + infs above numel 1000");
    }
}

TEST_CASE("a b-tree page that lost cells is found, not read as fewer rows", "[loader][bad][limits]")
{
    const std::string dir = scratch_dir("lost_cells");
    const std::string path = dir + "/trace.sqlite";
    REQUIRE(kernels_scenario(40).write_fp8scope(path));
    REQUIRE(plain_count(path, "FP8SCOPE_KERNEL") == 40);
    std::string found_by;
    SECTION("a finished trace that records its row counts: the rows read differ from those written")
    {
        found_by = "FP8SCOPE_KERNEL reads as 30 rows, but 40 were written (row counts)";
    }
    SECTION("a trace without row counts (older or unfinished): PRAGMA quick_check")
    {
        exec_sql(path, "DELETE FROM FP8SCOPE_META WHERE key LIKE 'row_count.%'");
        found_by = "(PRAGMA quick_check)";
    }
    // The table fits one leaf page; telling its header it holds 30 cells hides 10 rows.
    const auto cells = hide_cells_of_leaf_table(path, "FP8SCOPE_KERNEL", 30);
    INFO((cells ? std::string() : cells.error().message));
    REQUIRE(cells == 40);

    // Plain SQLite reads the damaged page without an error: 10 kernels are silently gone.
    CHECK(plain_count(path, "FP8SCOPE_KERNEL") == 30);
    const std::set<std::string> before = files_in(dir);
    auto result = load_trace(path);
    check_error(result, ErrorCode::InvalidTrace, path, "is corrupt: ");
    CHECK(result.error().message.ends_with(found_by));
    CHECK(files_in(dir) == before); // nothing written beside the trace: no -wal, no -shm, no journal
}

TEST_CASE("recorded row counts: every counted table is checked, and a bad count is refused", "[loader][bad][limits]")
{
    const std::string dir = scratch_dir("row_counts");
    const std::string path = dir + "/trace.sqlite";
    REQUIRE(kernels_scenario(12).write_fp8scope(path));
    SECTION("an intact trace loads, with the counts it recorded")
    {
        auto loaded = load_trace(path);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK(loaded->meta.raw.at("row_count.FP8SCOPE_KERNEL") == "12");
        CHECK(loaded->meta.raw.at("row_count.CUPTI_ACTIVITY_KIND_RUNTIME") == "12");
        CHECK(loaded->row_counts.at("FP8SCOPE_KERNEL") == 12);
    }
    SECTION("a row added after the count was taken")
    {
        exec_sql(path, "INSERT INTO FP8SCOPE_STEP_MARKER VALUES (5, 1, 16777216001, 0)");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "is corrupt: FP8SCOPE_STEP_MARKER reads as 1 rows, but 0 were written (row counts)");
    }
    SECTION("one table's count missing while the others are there")
    {
        exec_sql(path, "DELETE FROM FP8SCOPE_META WHERE key = 'row_count.NVTX_EVENTS'");
        check_error(load_trace(path), ErrorCode::InvalidTrace, path,
            "is corrupt: FP8SCOPE_META records the row counts of other tables but not of NVTX_EVENTS (row counts)");
    }
    SECTION("a count that is not a non-negative integer")
    {
        for (const std::string value : { "-1", "'12'", "1.5" }) {
            INFO("value " << value);
            exec_sql(path, "UPDATE FP8SCOPE_META SET value = " + value + " WHERE key = 'row_count.FP8SCOPE_KERNEL'");
            check_error(load_trace(path), ErrorCode::InvalidTrace, path,
                "FP8SCOPE_META row_count.FP8SCOPE_KERNEL is not a row count");
        }
    }
}

TEST_CASE("loading an intact trace leaves nothing beside it", "[loader][limits]")
{
    const std::string dir = scratch_dir("no_litter");
    REQUIRE(kernels_scenario(5).write_fp8scope(dir + "/trace.sqlite"));
    const std::set<std::string> before = files_in(dir);
    REQUIRE(load_trace(dir + "/trace.sqlite"));
    CHECK(files_in(dir) == before);
}
