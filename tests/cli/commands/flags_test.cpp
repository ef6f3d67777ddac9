// Flags by habit (issue 28 item 6): "did you mean" for a mistyped option, --steps N for one step, and a step range
// that falls in the warm-up names --warmup 0. On the real FP8 trace (30 NVTX steps, 2 of warm-up).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

using namespace fp8scope::cli_test;

namespace {

const std::string kFp8 = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";

} // namespace

TEST_CASE("a mistyped option gets a 'did you mean', exit 2", "[cli][flags]")
{
    const auto report = run_fp8scope({ "report", kFp8, "--stpes", "3:4" });
    CHECK(report.exit_code == 2);
    CHECK(report.out.empty());
    CHECK(report.err.starts_with("fp8scope: usage error: unknown option '--stpes' (did you mean --steps?)\n"));
    const auto check = run_fp8scope({ "check", kFp8, "--max-bubble-ration", "0.5" });
    CHECK(check.exit_code == 2);
    CHECK(check.err.find("did you mean --max-bubble-ratio?") != std::string::npos);
    const auto info = run_fp8scope({ "info", kFp8, "--fromat=json" });
    CHECK(info.exit_code == 2);
    CHECK(info.err.find("unknown option '--fromat' (did you mean --format?)") != std::string::npos);
    // Nothing close: CLI11's own line.
    const auto far = run_fp8scope({ "report", kFp8, "--zzzzzz" });
    CHECK(far.exit_code == 2);
    CHECK(far.err.find("did you mean") == std::string::npos);
    CHECK(far.err.find("--zzzzzz") != std::string::npos);
}

TEST_CASE("report --steps N analyses step N alone", "[cli][flags]")
{
    const auto doc = nlohmann::json::parse(run_fp8scope_ok({ "report", kFp8, "--steps", "5", "--format", "json" }));
    REQUIRE(doc["steps"]["steps"].size() == 1);
    CHECK(doc["steps"]["steps"][0]["index"] == 5);
    const auto same = nlohmann::json::parse(run_fp8scope_ok({ "report", kFp8, "--steps", "5:5", "--format", "json" }));
    CHECK(doc["totals"] == same["totals"]);
    const auto bad = run_fp8scope({ "report", kFp8, "--steps", "five" });
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("or one step N") != std::string::npos);
}

TEST_CASE("a step range in the warm-up says so and names --warmup 0", "[cli][flags]")
{
    const auto result = run_fp8scope({ "report", kFp8, "--steps", "0:1" });
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("--steps 0:1 falls in the warm-up: the first 2 steps are left out as warm-up (the steps left "
                          "start at 2); add --warmup 0 to analyse them")
        != std::string::npos);
    // As it says: with --warmup 0 the same range is analysed.
    const auto doc = nlohmann::json::parse(
        run_fp8scope_ok({ "report", kFp8, "--steps", "0:1", "--warmup", "0", "--format", "json" }));
    CHECK(doc["steps"]["steps"].size() == 2);
    // Past the last step it is the usual message.
    const auto past = run_fp8scope({ "report", kFp8, "--steps", "90:99" });
    CHECK(past.exit_code == 2);
    CHECK(past.err.find("falls in the warm-up") == std::string::npos);
    CHECK(past.err.find("selects none of") != std::string::npos);
}

TEST_CASE("output into a file with -o FILE: report, check, compare and info, nothing on stdout, 74 when it cannot",
    "[cli][flags]")
{
    const std::string dir = scratch_dir("flags_output");
    const std::string syncs = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-sample-syncs.sqlite";
    struct Case {
        std::vector<std::string> args;
        int exit_code;
        std::string starts;
    };
    const std::vector<Case> cases {
        { { "report", kFp8, "--format", "json" }, 0, "{" },
        { { "report", kFp8 }, 0, "fp8scope report: " },
        { { "info", kFp8 }, 0, "" },
        { { "check", kFp8, "--max-bubble-ratio", "0.1" }, 1, "" }, // the check fails (0.676): exit 1, table in the file
        // Two different jobs without tensor statistics: compared by performance alone.
        { { "compare", kFp8, syncs }, 0, "fp8scope compare: " },
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::string path = dir + "/out-" + std::to_string(i) + ".txt";
        auto args = cases[i].args;
        args.insert(args.end(), { "-o", path });
        const auto to_file = run_fp8scope(args);
        CAPTURE(args.front());
        INFO(to_file.err);
        CHECK(to_file.exit_code == cases[i].exit_code);
        CHECK(to_file.out.empty());
        const std::string written = read_text_file(path);
        CHECK(written.starts_with(cases[i].starts));
        // The same bytes as on stdout (no colour: a file is not a terminal either way).
        const auto to_stdout = run_fp8scope(cases[i].args);
        CHECK(written == to_stdout.out);
    }
    const auto bad = run_fp8scope({ "report", kFp8, "-o", dir + "/no/such/dir/out.txt" });
    CHECK(bad.exit_code == 74);
    CHECK(bad.err.find("cannot write '" + dir + "/no/such/dir/out.txt'") != std::string::npos);
}

TEST_CASE(
    "check over ranks names the one-trace budgets it refuses, a directory of unrelated traces says how it is read",
    "[cli][flags]")
{
    const std::string ranks = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/ranks/fp8-clean";
    const auto refused = run_fp8scope({ "check", ranks, "--max-syncs-per-step", "3", "--no-nonfinite" });
    CHECK(refused.exit_code == 2);
    CHECK(
        refused.err.starts_with("fp8scope: usage error: --max-syncs-per-step, --no-nonfinite apply to one trace; over "
                                "the ranks of a job use --max-bubble-ratio or --max-straggler-wait"));
    // With a rank budget beside it, still refused: a one-trace budget would silently judge nothing.
    const auto mixed = run_fp8scope({ "check", ranks, "--max-bubble-ratio", "0.9", "--max-launch-bound-ratio", "0.5" });
    CHECK(mixed.exit_code == 2);
    CHECK(mixed.err.find("--max-launch-bound-ratio applies to one trace") != std::string::npos);

    const std::string dir = scratch_dir("flags_unrelated");
    for (const char* name : { "h100-sample-syncs.sqlite", "h100-train-fp8.sqlite" })
        std::filesystem::copy_file(std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/" + name, dir + "/" + name,
            std::filesystem::copy_options::overwrite_existing);
    const auto unrelated = run_fp8scope({ "report", dir });
    CHECK(unrelated.exit_code == 3);
    CHECK(unrelated.err.find("(a directory is read as the traces of one job's ranks; give a file to analyse it alone, "
                             "e.g. '")
        != std::string::npos);
    CHECK(std::ranges::count(unrelated.err, '\n') == 1); // one line
}

TEST_CASE("check --max-step-time: the mean step time against a duration, the longest step named", "[cli][flags]")
{
    // The FP8 trace's 28 analysed steps: mean 57.774 ms, the longest step 5 at 74.353 ms (report's per-step rows).
    const auto holds = run_fp8scope({ "check", kFp8, "--max-step-time", "60ms" });
    CHECK(holds.exit_code == 0);
    CHECK(holds.out.find("ok   max-step-time            57.774 ms (budget 60.000 ms; worst step 5: 74.353 ms)")
        != std::string::npos);
    const auto fails = run_fp8scope({ "check", kFp8, "--max-step-time", "55ms" });
    CHECK(fails.exit_code == 1);
    CHECK(fails.out.find("FAIL max-step-time") != std::string::npos);
    const auto unit = run_fp8scope({ "check", kFp8, "--max-step-time", "60" });
    CHECK(unit.exit_code == 2); // a bare number could be ms or s
    const auto ranks = run_fp8scope(
        { "check", std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/ranks/fp8-clean", "--max-step-time", "1s" });
    CHECK(ranks.exit_code == 2);
    CHECK(ranks.err.find("--max-step-time applies to one trace") != std::string::npos);
}
