// Capture windows from the command line (docs/cli.md "record", docs/collector.md "Capture windows"): the options
// become one capture plan for the collector (FP8SCOPE_CAPTURE_PLAN), every bad value or senseless combination is a
// usage error (exit 2, one line, the command never runs), and report and info say what a windowed trace captured.
#include "cli_test_support.hpp"
#include "record_test_support.hpp"

#include "fp8scope/common/capture_plan.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::record_test;
using cli_test::scratch_dir;

namespace {

const std::string kPrintCapture = R"(for v in FP8SCOPE_CAPTURE_PLAN FP8SCOPE_CAPTURE_STEPS FP8SCOPE_CAPTURE_EVERY; do
  eval "echo $v=\${$v}"
done)";

std::string value_of(const std::string& out, const std::string& name)
{
    const auto lines = lines_starting_with(out, name + "=");
    REQUIRE(lines.size() == 1);
    return lines.front().substr(name.size() + 1);
}

testing::ProcessResult record_printing(std::vector<std::string> options)
{
    options.insert(options.end(), { "--", "/bin/sh", "-c", kPrintCapture });
    return run_record(options);
}

// Exit 2, one "usage error" line naming `text`, and the command (which would print "ran") never ran.
void check_refused(std::vector<std::string> options, const std::string& text)
{
    options.insert(options.end(), { "--", "/bin/sh", "-c", "echo ran" });
    const auto result = run_record(options);
    INFO(result.out << result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    const auto lines = lines_starting_with(result.err, "fp8scope: usage error: ");
    REQUIRE(lines.size() == 1);
    CHECK(lines.front().find(text) != std::string::npos);
}

} // namespace

TEST_CASE(
    "record passes the capture plan it parsed to the collector as one variable (issue 46)", "[cli][record][capture]")
{
    // Each kind: the plan record parsed, as the collector reads it back (deserialize_capture_plan()).
    const std::pair<std::vector<std::string>, std::string> kinds[] = {
        { { "--capture-steps", "20:29", "--stats-outside-windows" },
            "fp8scope-capture-plan/1 mode=steps first=20 last=29 every=0 length=0 delay_ns=0 duration_ns=- "
            "stats_outside=1 options=--capture-steps 20:29 --stats-outside-windows" },
        { { "--capture-every", "1000", "--capture-length", "10" },
            "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=1000 length=10 delay_ns=0 duration_ns=- "
            "stats_outside=0 options=--capture-every 1000 --capture-length 10" },
        { { "--capture-range", "cudaProfilerApi" },
            "fp8scope-capture-plan/1 mode=cudaProfilerApi first=0 last=0 every=0 length=0 delay_ns=0 duration_ns=- "
            "stats_outside=0 options=--capture-range cudaProfilerApi" },
        { { "--delay", "2.5", "--duration", "10" },
            "fp8scope-capture-plan/1 mode=time first=0 last=0 every=0 length=0 delay_ns=2500000000 "
            "duration_ns=10000000000 stats_outside=0 options=--delay 2.5 --duration 10" },
        { { "--capture-every", "50", "--capture-length", "5", "--max-size", "64" },
            "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=50 length=5 delay_ns=0 duration_ns=- "
            "stats_outside=0 max_bytes=67108864 options=--capture-every 50 --capture-length 5 --max-size 64" },
        // --monitor: its defaults, each replaced by the option given.
        { { "--monitor" },
            "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=1000 length=10 delay_ns=0 duration_ns=- "
            "stats_outside=0 max_bytes=2147483648 options=--capture-every 1000 --capture-length 10 --max-size 2048" },
        { { "--monitor", "--capture-every", "200", "--max-size", "512" },
            "fp8scope-capture-plan/1 mode=periodic first=0 last=0 every=200 length=10 delay_ns=0 duration_ns=- "
            "stats_outside=0 max_bytes=536870912 options=--capture-every 200 --capture-length 10 --max-size 512" },
    };
    for (auto [options, plan] : kinds) {
        options.insert(options.begin(), "-q");
        const auto result = record_printing(options);
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        CHECK(value_of(result.out, "FP8SCOPE_CAPTURE_PLAN") == plan);
        const CapturePlanResult back = deserialize_capture_plan(plan);
        REQUIRE(back.plan);
        CHECK(serialize_capture_plan(*back.plan) == plan);
        // record writes no hand-set variable of its own.
        CHECK(value_of(result.out, "FP8SCOPE_CAPTURE_STEPS").empty());
    }
    // A whole-run recording passes no plan: the collector then reads what the caller set by hand.
    const auto whole = record_printing({ "-q" });
    CHECK(value_of(whole.out, "FP8SCOPE_CAPTURE_PLAN").empty());
}

TEST_CASE("record refuses bad capture values and senseless combinations with one line", "[cli][record][capture][usage]")
{
    for (const char* steps : { "20", "a:b", "29:20", "-1:3", "1:2:3" })
        check_refused({ "--capture-steps", steps }, std::string("--capture-steps '") + steps + "'");
    check_refused({ "--capture-every", "0", "--capture-length", "1" }, "--capture-every '0'");
    check_refused({ "--capture-every", "ten", "--capture-length", "1" }, "--capture-every 'ten'");
    check_refused({ "--capture-every", "10", "--capture-length", "11" }, "--capture-length '11'");
    check_refused({ "--capture-every", "10", "--capture-length", "0" }, "--capture-length '0'");
    check_refused({ "--capture-every", "10" }, "go together");
    check_refused({ "--capture-length", "5" }, "go together");
    check_refused({ "--capture-range", "nvtx" }, "the only range is cudaProfilerApi");
    check_refused({ "--delay", "-1" }, "--delay '-1'");
    check_refused({ "--delay", "soon" }, "--delay 'soon'");
    check_refused({ "--delay", "1e7" }, "--delay '1e7'");
    check_refused({ "--duration", "0" }, "--duration '0'");
    check_refused({ "--duration", "inf" }, "--duration 'inf'");
    check_refused(
        { "--capture-steps", "1:2", "--capture-range", "cudaProfilerApi" }, "choose one kind of capture window");
    check_refused({ "--capture-steps", "1:2", "--capture-every", "5", "--capture-length", "1" }, "choose one kind");
    check_refused({ "--capture-range", "cudaProfilerApi", "--delay", "1" }, "choose one kind");
    check_refused({ "--stats-outside-windows" }, "--stats-outside-windows needs a capture window");
    check_refused({ "--max-size", "64" }, "--max-size needs periodic windows");
    check_refused({ "--capture-steps", "1:2", "--max-size", "64" }, "--max-size needs periodic windows");
    check_refused({ "--capture-every", "10", "--capture-length", "1", "--max-size", "8" }, "--max-size '8'");
    check_refused({ "--capture-every", "10", "--capture-length", "1", "--max-size", "lots" }, "--max-size 'lots'");
    check_refused({ "--monitor", "--capture-steps", "1:2" }, "choose one kind");
    check_refused({ "--monitor", "--capture-length", "2000" }, "--capture-length '2000'");
}

TEST_CASE("record --help lists the capture options", "[cli][record][capture][usage]")
{
    const auto result = run_record({ "--help" });
    CHECK(result.exit_code == 0);
    for (const char* text :
        { "--capture-steps A:B", "--capture-every N", "--capture-length K", "--capture-range RANGE", "--delay SECONDS",
            "--duration SECONDS", "--stats-outside-windows", "--capture-steps 100:109", "--max-size MIB", "--monitor" })
        CHECK(result.out.find(text) != std::string::npos);
}

TEST_CASE("report and info say which windows a trace captured", "[cli][report][info][capture]")
{
    const auto dir = scratch_dir("capture_report");
    testing::Scenario s = cli_test::small_scenario();
    s.capture_mode("steps", "--capture-steps 20:29");
    s.capture_window(500, 80'000, schema::CaptureTrigger::Steps, 20, 29);
    const std::string path = dir + "/windowed.sqlite";
    REQUIRE(s.write_fp8scope(path));

    const std::string text = cli_test::run_fp8scope_ok({ "report", path });
    CHECK(text.find("Captured: steps (--capture-steps 20:29): 1 window: 500 ns to 80.000 us (steps 20 to 29)")
        != std::string::npos);
    const auto json = nlohmann::json::parse(cli_test::run_fp8scope_ok({ "report", "--format", "json", path }));
    CHECK(json["capture"]["mode"] == "steps");
    CHECK(json["capture"]["options"] == "--capture-steps 20:29");
    REQUIRE(json["capture"]["windows"].size() == 1);
    CHECK(json["capture"]["windows"][0]["start_ns"] == 500);
    CHECK(json["capture"]["windows"][0]["end_ns"] == 80'000);
    CHECK(json["capture"]["windows"][0]["first_step"] == 20);
    CHECK(json["capture"]["windows"][0]["trigger"] == "STEPS");
    CHECK(json["steps"]["outside_windows_excluded"] == 0);

    const std::string info = cli_test::run_fp8scope_ok({ "info", path });
    CHECK(info.find("steps (--capture-steps 20:29): 1 window") != std::string::npos);
    const auto info_json = nlohmann::json::parse(cli_test::run_fp8scope_ok({ "info", "--format", "json", path }));
    CHECK(info_json["capture"]["windows"][0]["last_step"] == 29);

    // A trace of the whole run says so, and its JSON has no windows.
    const std::string whole = dir + "/whole.sqlite";
    cli_test::write_small_trace(whole);
    CHECK(cli_test::run_fp8scope_ok({ "info", whole }).find("whole run") != std::string::npos);
    const auto whole_json = nlohmann::json::parse(cli_test::run_fp8scope_ok({ "report", "--format", "json", whole }));
    CHECK(whole_json["capture"]["mode"] == "full");
    CHECK(whole_json["capture"]["windows"].is_null());
}
