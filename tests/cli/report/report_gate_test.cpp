// A truthful report and gate (docs/cli.md "Exit codes"): a --device, --steps or --warmup that selects nothing is a
// usage error naming what exists, for `report` and `check` alike; a budget with no data fails with the reason; the
// default warm-up, when clamped, says so on stderr; an unfinished trace, dropped records and clipped kernels are
// shown in every format; a trace with impossible times or a damaged b-tree exits 3 with one line.
#include "cli_test_support.hpp"
#include "corrupt_page.hpp"
#include "xml_check.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <limits>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kFp8Trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";

std::string first_line(const std::string& text)
{
    return text.substr(0, text.find('\n'));
}

std::string written(const testing::Scenario& s, const std::string& test_name, bool finished = true)
{
    const std::string path = scratch_dir(test_name) + "/trace.sqlite";
    const auto ok = s.write_fp8scope(path, finished);
    INFO((ok ? std::string() : ok.error().message));
    REQUIRE(ok);
    return path;
}

// `steps` NVTX steps "train_step" of 1000 ns, each with a cudaMalloc and no GPU work at all.
testing::Scenario steps_without_kernels(int steps)
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, 21);
    for (int64_t i = 0; i < steps; ++i) {
        s.nvtx_range(host, i * 1000, i * 1000 + 1000, "train_step");
        s.api_call(host, { .api_start_ns = i * 1000 + 10, .api_end_ns = i * 1000 + 20, .name = "cudaMalloc_v3020" });
    }
    return s;
}

} // namespace

TEST_CASE("report and check refuse a selection that leaves nothing, naming what the trace has", "[cli][gate]")
{
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases {
        { { "--device", "99" }, "--device 99: no device 99 with GPU activity in the analysed steps; devices: 0" },
        { { "--steps", "500:600" }, "--steps 500:600 selects none of steps 2–29" },
        { { "--steps", ":1" },
            "--steps :1 falls in the warm-up: the first 2 steps are left out as warm-up (the steps "
            "left start at 2); add --warmup 0 to analyse them" },
        { { "--warmup", "50" }, "--warmup 50 leaves no step: the trace has 30 steps (nvtx); use --warmup 29 or less" },
    };
    for (const auto& [selection, message] : cases) {
        for (const std::string command : { "report", "check" }) {
            std::vector<std::string> args { command, kFp8Trace };
            if (command == "check")
                args.insert(args.end(), { "--max-bubble-ratio", "0.1", "--max-syncs-per-step", "5" });
            else
                args.insert(args.end(), { "--format", "json" });
            args.insert(args.end(), selection.begin(), selection.end());
            const auto result = run_fp8scope(args);
            INFO(command << " " << selection.front() << "\n" << result.out << result.err);
            CHECK(result.exit_code == 2); // never a pass, never "no steps"
            CHECK(result.out.empty());
            CHECK(first_line(result.err) == "fp8scope: usage error: " + message);
            CHECK(result.err.find("Run 'fp8scope " + command + " --help'") != std::string::npos);
        }
    }
}

TEST_CASE("check fails a timeline budget that has no data, with the reason in place of the figure", "[cli][gate]")
{
    const std::string trace = written(steps_without_kernels(4), "gate_no_kernels");
    const std::string dir = scratch_dir("gate_no_kernels_reports");
    const auto result = run_fp8scope(
        { "check", trace, "--max-bubble-ratio", "0.1", "--junit", dir + "/check.xml", "--md", dir + "/check.md" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.out.find("  FAIL max-bubble-ratio                - (budget    0.100; no GPU activity in the "
                          "analysed steps)\n")
        != std::string::npos);
    CHECK(result.out.find("0 of 1 budgets hold") != std::string::npos);
    const std::string junit = read_text_file(dir + "/check.xml");
    CHECK(parse_xml(junit).ok);
    CHECK(junit.find("<failure message=\"max-bubble-ratio: no GPU activity in the analysed steps\"/>")
        != std::string::npos);
    CHECK(read_text_file(dir + "/check.md")
              .find("| `max-bubble-ratio` | - | 0.100 | **FAIL** | no GPU activity in the analysed "
                    "steps |")
        != std::string::npos);
}

TEST_CASE("a clamped default warm-up is one warning line, a chosen warm-up that fits is silent", "[cli][gate]")
{
    const std::string trace = written(steps_without_kernels(2), "gate_warmup");
    const auto clamped = run_fp8scope({ "report", trace });
    INFO(clamped.err);
    CHECK(clamped.exit_code == 0);
    CHECK(clamped.err
        == "fp8scope: warning: the trace has 2 steps (nvtx): 1 warm-up step left out instead of 2, so that one step "
           "is analysed\n");
    CHECK(clamped.out.find("Steps: 1 step from nvtx") != std::string::npos);
    const auto chosen = run_fp8scope({ "report", trace, "--warmup", "1" });
    CHECK(chosen.exit_code == 0);
    CHECK(chosen.err.empty());
}

TEST_CASE("every format shows an unfinished trace and dropped records", "[cli][gate]")
{
    testing::Scenario s = small_scenario();
    s.dropped({ .timestamp_ns = 2'000, .source = schema::DropSource::CuptiNoBuffer, .count = 3, .device_id = 0 });
    const std::string trace = written(s, "gate_unfinished", /*finished=*/false);
    const auto report = [&](const std::string& format) {
        const auto result = run_fp8scope({ "report", trace, "--warmup", "0", "--format", format });
        INFO(format << "\n" << result.err);
        REQUIRE(result.exit_code == 0);
        return result.out;
    };
    const std::string warning = "unfinished: the recording process did not close the trace (crash or SIGKILL); data "
                                "up to the last commit is present; 3 records dropped while recording: the figures "
                                "miss them";
    CHECK(report("text").find("\nRecording: " + warning + "\n") != std::string::npos);
    CHECK(report("md").find("**Warning:** Recording: " + warning + ".") != std::string::npos);
    const std::string html = report("html");
    CHECK(html.find("<p class=\"bad\">Warning: " + warning + ".</p>") != std::string::npos);
    CHECK(parse_xml(html).ok);
    const auto json = nlohmann::json::parse(report("json"));
    CHECK(json["recording"]["finished"] == false);
    CHECK(json["recording"]["dropped_records"] == 3);
    const auto junit = parse_xml(report("junit"));
    REQUIRE(junit.ok);
    std::map<std::string, std::string> properties;
    for (const XmlElement* p : junit.root.descendants("property"))
        properties[p->attribute("name")] = p->attribute("value");
    CHECK(properties["trace_finished"] == "false");
    CHECK(properties["dropped_records"] == "3");

    // check says it too, in each of its formats, without changing the verdict.
    const std::string dir = scratch_dir("gate_unfinished_check");
    const auto check = run_fp8scope({ "check", trace, "--warmup", "0", "--max-bubble-ratio", "1", "--junit",
        dir + "/check.xml", "--md", dir + "/check.md" });
    CHECK(check.exit_code == 0);
    CHECK(check.out.find("  warning: unfinished: the recording process did not close the trace") != std::string::npos);
    CHECK(check.out.find("  warning: 3 records dropped while recording: the figures miss them\n") != std::string::npos);
    CHECK(
        read_text_file(dir + "/check.md").find("**Warning:** 3 records dropped while recording") != std::string::npos);
    CHECK(read_text_file(dir + "/check.xml").find("<property name=\"trace_finished\" value=\"false\"/>")
        != std::string::npos);

    // A complete recording says so in one short line.
    const std::string clean = written(small_scenario(), "gate_finished");
    const auto finished = run_fp8scope({ "report", clean, "--warmup", "0" });
    CHECK(finished.out.find("\nRecording: finished (exit), no records dropped\n") != std::string::npos);
}

TEST_CASE("kernels clipped on their stream are reported in every format", "[cli][gate]")
{
    testing::Scenario s;
    const auto host = s.thread(s.session().pid, 21);
    s.launch(host, { .api_start_ns = 0, .api_end_ns = 5 }, { .start_ns = 100, .end_ns = 200, .name = "a" });
    s.launch(host, { .api_start_ns = 10, .api_end_ns = 15 }, { .start_ns = 130, .end_ns = 260, .name = "b" });
    const std::string trace = written(s, "gate_clipped");
    const std::string text = run_fp8scope({ "report", trace, "--warmup", "0" }).out;
    CHECK(text.find("Recording: 1 kernel started before the previous kernel of its stream ended and was clipped by "
                    "70 ns in all (docs/analysis.md)\n")
        != std::string::npos);
    const auto json = nlohmann::json::parse(run_fp8scope({ "report", trace, "--warmup", "0", "--format", "json" }).out);
    CHECK(json["recording"]["clipped_kernels"]["count"] == 1);
    CHECK(json["recording"]["clipped_kernels"]["clipped_ns"] == 70);
    CHECK(run_fp8scope({ "report", trace, "--warmup", "0", "--format", "junit" })
              .out.find("<property name=\"clipped_kernels\" value=\"1\"/>")
        != std::string::npos);
}

TEST_CASE("a time near INT64_MAX and a damaged b-tree exit 3 with one line", "[cli][gate][bad]")
{
    testing::Scenario far = small_scenario();
    far.orphan_kernel(
        { .start_ns = std::numeric_limits<int64_t>::max() - 1000, .end_ns = std::numeric_limits<int64_t>::max() - 10 });
    const std::string far_trace = written(far, "gate_far_time");
    for (const std::string command : { "report", "info" }) {
        const auto result = run_fp8scope({ command, far_trace });
        check_bad_trace(result);
        CHECK(result.err.find("out of range (more than 2^53 ns, about 104 days, from the session start)")
            != std::string::npos);
    }

    testing::Scenario many;
    const auto host = many.thread(many.session().pid, 21);
    for (int64_t i = 0; i < 40; ++i)
        many.launch(host, { .api_start_ns = i * 100, .api_end_ns = i * 100 + 5 },
            { .start_ns = i * 100 + 10, .end_ns = i * 100 + 60 });
    const std::string damaged = written(many, "gate_damaged");
    REQUIRE(testing::hide_cells_of_leaf_table(damaged, "FP8SCOPE_KERNEL", 30) == 40);
    const auto result = run_fp8scope({ "check", damaged, "--max-bubble-ratio", "0.9" });
    check_bad_trace(result);
    CHECK(result.err.starts_with("fp8scope: error: trace '" + damaged + "' is corrupt: "));
    CHECK(result.err.ends_with(" (row counts)\n"));
}

TEST_CASE("--help lists the exit codes, the same in every command", "[cli][gate][usage]")
{
    const std::string main_help = run_fp8scope({ "--help" }).out;
    CHECK(main_help.find("Exit codes: 0 ok, 1 a check budget failed (or had no data to judge), 2 usage error (also "
                         "--steps, --device\nor --warmup selecting nothing), 3 unreadable or invalid trace, 74 output "
                         "cannot be written, 70 internal error")
        != std::string::npos);
    const std::string report_help = run_fp8scope({ "report", "--help" }).out;
    CHECK(report_help.find("Exit codes: 0 ok, 2 usage error (also: --steps, --device or --warmup selecting nothing;")
        != std::string::npos);
    CHECK(report_help.find("74 stdout cannot be") != std::string::npos);
    const std::string info_help = run_fp8scope({ "info", "--help" }).out;
    CHECK(info_help.find("Exit codes: 0 ok, 2 usage error, 3 unreadable or invalid trace (one line on stderr), 74 "
                         "stdout cannot be\nwritten, 70 internal error.")
        != std::string::npos);
    const std::string check_help = run_fp8scope({ "check", "--help" }).out;
    CHECK(check_help.find("Exit codes: 0 every budget holds, 1 a budget failed (or had no data to judge), 2 usage "
                          "error")
        != std::string::npos);
    CHECK(check_help.find("74 a report file or stdout cannot be written, 70 internal error") != std::string::npos);
}
