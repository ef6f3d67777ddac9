// load_trace_summary() (issue 47): a finished trace is summarized from its meta, its recorded row counts and activity
// span and its small tables, and the summary equals the one of a full load, field by field; any trace that does not
// record what is needed is loaded whole; a summary refuses what it reads that is bad, and a truncated file.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/format/schema.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

std::string written(const Scenario& s, const std::string& name, bool finished = true)
{
    const std::string path = scratch_dir(name) + "/trace.sqlite";
    REQUIRE(s.write_fp8scope(path, finished));
    return path;
}

TraceSummary full_summary(const std::string& path)
{
    auto model = load_trace(path);
    REQUIRE(model);
    return summarize(*model);
}

TraceSummary read_summary(const std::string& path)
{
    auto summary = load_trace_summary(path);
    REQUIRE(summary);
    return *summary;
}

// The collector's own work at both ends of the run (left out of the span by correlation id and by name), the job's
// activity of every kind between, an NVTX mark after the last activity that ends, steps, a dropped record and a
// windowed capture.
Scenario edges_scenario()
{
    Scenario s;
    const HostThread t = s.thread(4242, 10, "main");
    s.collector_work(s.launch(t, { 100, 110 }, { 120, 125, "stats_kernel" }));
    s.launch(t, { 130, 140 }, { 150, 160, "void fp8scope::probes::stats_kernel<float>(int)" });
    s.step_marker(t, 1000, 0);
    s.launch(t, { 1000, 1010 }, { 1020, 2000, "gemm" });
    s.memcpy(t, { 2010, 2020, "cudaMemcpyAsync_v3020" }, { 2030, 2100, 1 << 20 });
    s.memset(t, { 2110, 2120, "cudaMemsetAsync_v3020" }, { 2130, 2140, 4096 });
    s.sync(t, 2150, 2600, schema::SyncType::StreamSynchronize, 7);
    s.nvtx_range(t, 990, 2610, "train_step");
    s.step_marker(t, 2620, 1);
    s.nvtx_mark(t, 3000, "checkpoint");
    s.dropped(DroppedRow { 2700, schema::DropSource::CuptiNoBuffer, 3, std::nullopt });
    s.capture_mode("steps", "--capture-steps 0:1");
    s.capture_window(990, 2620, schema::CaptureTrigger::Steps, 0, 1);
    const uint32_t last_own = s.memset(t, { 3100, 3110, "cudaMemsetAsync_v3020" }, { 3120, 5000, 64 });
    s.collector_work(last_own);
    return s;
}

} // namespace

TEST_CASE("a finished trace's summary comes from its meta and equals a full load's", "[load][summary]")
{
    for (const auto& [name, scenario] : { std::pair { "edges", edges_scenario() }, { "full", full_scenario() } }) {
        INFO(name);
        const std::string path = written(scenario, std::string("summary-") + name);
        const TraceSummary fast = read_summary(path);
        CHECK_FALSE(fast.rows_read);
        TraceSummary full = full_summary(path);
        CHECK(full.rows_read);
        full.rows_read = false;
        CHECK(fast.row_counts == full.row_counts);
        CHECK(fast.time_span_ns == full.time_span_ns);
        CHECK(fast.capture == full.capture);
        CHECK(fast == full);
    }
    // The span leaves the collector's work out, as the loader does: its marked calls and their work, and kernels named
    // in its namespace (but not the API call that launched one unmarked, at 130), up to the NVTX mark at 3000.
    const TraceSummary edges = read_summary(written(edges_scenario(), "summary-edges-span"));
    REQUIRE(edges.time_span_ns);
    CHECK(*edges.time_span_ns == std::pair<int64_t, int64_t>(130, 3000));
    CHECK(edges.marked_steps == std::pair<int64_t, int64_t>(0, 1));
    CHECK(edges.dropped_records == 3);
}

TEST_CASE("traces that do not record the span or the counts are loaded whole", "[load][summary]")
{
    SECTION("an older trace: no activity span in its meta")
    {
        const std::string path = written(edges_scenario(), "summary-older");
        exec_sql(path, "DELETE FROM FP8SCOPE_META WHERE key IN ('activity_first_ns', 'activity_last_ns')");
        const TraceSummary summary = read_summary(path);
        CHECK(summary.rows_read);
        CHECK(summary == full_summary(path));
    }
    SECTION("a span no loaded trace could have: the last before the first")
    {
        const std::string path = written(edges_scenario(), "summary-backwards");
        exec_sql(path, "UPDATE FP8SCOPE_META SET value = -5 WHERE key = 'activity_last_ns'");
        CHECK(read_summary(path).rows_read);
    }
    SECTION("an unfinished trace")
    {
        const TraceSummary summary = read_summary(written(edges_scenario(), "summary-unfinished", false));
        CHECK(summary.rows_read);
        CHECK_FALSE(summary.meta.finished);
    }
    SECTION("no activity at all")
    {
        Scenario s;
        s.thread(4242, 10);
        const std::string path = written(s, "summary-empty");
        const TraceSummary summary = read_summary(path);
        CHECK(summary.rows_read);
        CHECK_FALSE(summary.time_span_ns);
    }
}

TEST_CASE("a summary refuses what it reads that is bad, and a truncated file", "[load][summary]")
{
    SECTION("a truncated trace")
    {
        const std::string path = written(full_scenario(), "summary-truncated");
        const auto size = std::filesystem::file_size(path);
        std::filesystem::resize_file(path, size - size / 4);
        const auto summary = load_trace_summary(path);
        REQUIRE_FALSE(summary);
        CHECK(summary.error().code == ErrorCode::InvalidTrace);
        CHECK(summary.error().message.find("truncated") != std::string::npos);
    }
    SECTION("a capture window that ends before it starts")
    {
        const std::string path = written(edges_scenario(), "summary-bad-window");
        exec_sql(path, "UPDATE FP8SCOPE_CAPTURE_WINDOW SET \"end\" = start - 1");
        const auto summary = load_trace_summary(path);
        REQUIRE_FALSE(summary);
        CHECK(summary.error().message.find(path) != std::string::npos);
    }
    SECTION("a row count that is not one")
    {
        const std::string path = written(edges_scenario(), "summary-bad-count");
        exec_sql(path, "UPDATE FP8SCOPE_META SET value = 'many' WHERE key = 'row_count.FP8SCOPE_KERNEL'");
        CHECK_FALSE(load_trace_summary(path));
    }
    SECTION("damage in rows a summary does not read: a full load finds it, the summary does not look")
    {
        const std::string path = written(edges_scenario(), "summary-bad-kernel");
        exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET duration = -5000");
        CHECK_FALSE(load_trace(path));
        CHECK_FALSE(read_summary(path).rows_read);
    }
}
