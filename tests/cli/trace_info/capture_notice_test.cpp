// Issue 25 item 6: `fp8scope record --capture-steps 5:9` on a job without step markers wrote a trace with 0 kernels
// and no word why. `info` (text and JSON) and `record`'s summary now say it, judged from the trace alone, so that an
// older trace of that kind says it too (capture_notice.hpp).
#include "cli_test_support.hpp"
#include "record_test_support.hpp"
#include "trace_info/record_summary.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace fp8scope;
using cli_test::scratch_dir;

namespace {

constexpr const char* kNoSteps = "the capture window never opened: no step markers or NVTX step ranges; use "
                                 "--capture-range, --delay/--duration or fp8scope.step()";

// What the collector leaves for a job without markers under --capture-steps 5:9: the meta, the GPU, no row of
// activity (CUPTI records nothing outside a window, and no window opened).
testing::Scenario never_opened(const std::string& options = "--capture-steps 5:9")
{
    testing::Scenario s;
    s.capture_mode(options.starts_with("--capture-every") ? "periodic" : "steps", options);
    return s;
}

std::string write(const testing::Scenario& s, const std::string& path)
{
    REQUIRE(s.write_fp8scope(path));
    return path;
}

std::vector<std::string> info_warnings(const std::string& path)
{
    const auto json = nlohmann::json::parse(cli_test::run_fp8scope_ok({ "info", "--format", "json", path }));
    return json.at("warnings").get<std::vector<std::string>>();
}

// A trace written by the writer itself, as the collector does: meta nvtx_step_ranges, no marker, no window.
std::string nvtx_counted(const std::string& path, int64_t ranges, bool finished)
{
    SessionInfo session = testing::Scenario().session();
    session.capture_mode = "steps";
    session.capture_options = "--capture-steps 100:109";
    auto db = TraceDb::create(path, session);
    REQUIRE(db);
    REQUIRE((*db)->set_nvtx_step_ranges(ranges));
    if (finished)
        REQUIRE((*db)->finish(FinishInfo {}));
    else
        REQUIRE((*db)->commit()); // then closed unfinished, as by a SIGKILL after the first range
    return path;
}

} // namespace

TEST_CASE(
    "info warns when a capture by steps never opened a window in a job without step markers", "[cli][info][capture]")
{
    const auto path = write(never_opened(), scratch_dir("capture_notice_info") + "/no-markers.sqlite");
    const std::string text = cli_test::run_fp8scope_ok({ "info", path });
    CHECK(text.find("  captured        steps (--capture-steps 5:9): no window was opened, nothing was captured\n"
                    "  warning         "
              + std::string(kNoSteps) + "\n")
        != std::string::npos);
    CHECK(info_warnings(path) == std::vector<std::string> { kNoSteps });

    // Periodic windows open on steps too.
    const auto periodic = write(never_opened("--capture-every 100 --capture-length 5"),
        scratch_dir("capture_notice_periodic") + "/no-markers.sqlite");
    CHECK(info_warnings(periodic) == std::vector<std::string> { kNoSteps });
}

TEST_CASE("info names the steps when the job marked some, all outside the window", "[cli][info][capture]")
{
    testing::Scenario s = never_opened();
    const auto host = s.thread(4242, 4242);
    for (int64_t step = 0; step <= 3; ++step)
        s.step_marker(host, 1'000 * (step + 1), step);
    const auto path = write(s, scratch_dir("capture_notice_markers") + "/short-job.sqlite");
    CHECK(info_warnings(path)
        == std::vector<std::string> {
            "the capture window never opened: the job's steps (0 to 3) all lie outside --capture-steps 5:9" });

    // NVTX step ranges, which CUPTI records only inside windows: the collector's count says how many there were.
    const auto dir = scratch_dir("capture_notice_nvtx");
    CHECK(info_warnings(nvtx_counted(dir + "/finished.sqlite", 50, true))
        == std::vector<std::string> {
            "the capture window never opened: the job's steps (0 to 49) all lie outside --capture-steps 100:109" });
    CHECK(info_warnings(nvtx_counted(dir + "/unfinished.sqlite", 1, false))
        == std::vector<std::string> {
            "the capture window never opened: the job's steps (from 0 on) all lie outside --capture-steps 100:109" });
    // A count of 0 is the collector saying there were none.
    CHECK(info_warnings(nvtx_counted(dir + "/none.sqlite", 0, true)) == std::vector<std::string> { kNoSteps });
}

TEST_CASE(
    "info gives no capture warning once a window opened, nor for a whole run or a time window", "[cli][info][capture]")
{
    const auto dir = scratch_dir("capture_notice_none");
    testing::Scenario opened = never_opened();
    opened.capture_window(500, 80'000, schema::CaptureTrigger::Steps, 5, 9);
    CHECK(info_warnings(write(opened, dir + "/opened.sqlite")).empty());
    CHECK(cli_test::run_fp8scope_ok({ "info", dir + "/opened.sqlite" }).find("warning") == std::string::npos);

    testing::Scenario time;
    time.capture_mode("time", "--delay 60");
    CHECK(info_warnings(write(time, dir + "/time.sqlite")).empty()); // the job may have ended before 60 s: no steps
    cli_test::write_small_trace(dir + "/whole.sqlite");
    CHECK(info_warnings(dir + "/whole.sqlite").empty());
}

TEST_CASE("record's summary warns, per trace, when the capture window never opened", "[cli][record][capture]")
{
    const auto dir = scratch_dir("capture_notice_record");
    const auto empty = write(never_opened(), dir + "/job.sqlite");
    const auto good = dir + "/good.sqlite";
    cli_test::write_small_trace(good);

    const auto summary = cli::summarize_trace(empty);
    REQUIRE(summary.counts);
    CHECK(summary.counts->capture_never_opened == kNoSteps);
    CHECK_FALSE(cli::summarize_trace(good).counts->capture_never_opened);

    // End to end, with a stand-in for the collector that lists both traces in the manifest.
    const auto result = record_test::run_record({ "--", "/bin/sh", "-c",
        "echo " + good + " >> \"$FP8SCOPE_MANIFEST\"; echo " + empty + " >> \"$FP8SCOPE_MANIFEST\"" });
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.err.starts_with("fp8scope: 2 traces written\n"));
    const auto warnings = record_test::lines_starting_with(result.err, "fp8scope: warning: ");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings.front() == "fp8scope: warning: " + empty + ": " + kNoSteps);
    CHECK(result.err.ends_with(warnings.front() + "\n")); // after the table, where a reader looks last
}
