// `fp8scope check`, the CI gate: exit 0 when every budget holds, 1 when one fails; JUnit XML with one testcase
// per budget whose failure names the worst step; Markdown for job summaries. On the real FP8 trace, whose
// bubble ratio `report` gives as 0.676 (tests/cli/report/report_test.cpp).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kFp8Trace = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite";

} // namespace

TEST_CASE("check exits 0 when every budget holds and writes one passing testcase per budget", "[cli][check]")
{
    const std::string dir = scratch_dir("check_pass");
    const auto result = run_fp8scope({ "check", kFp8Trace, "--max-bubble-ratio", "0.9", "--max-syncs-per-step", "1",
        "--max-launch-bound-ratio", "0.7", "--junit", dir + "/check.xml", "--md", dir + "/check.md" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("3 of 3 budgets hold") != std::string::npos);
    const std::string junit = read_text_file(dir + "/check.xml");
    CHECK(occurrences(junit, "<testcase ") == 3);
    CHECK(occurrences(junit, "<failure") == 0);
    CHECK(junit.find("tests=\"3\" failures=\"0\"") != std::string::npos);
    CHECK(read_text_file(dir + "/check.md").starts_with("### fp8scope check: all budgets hold"));
}

TEST_CASE("check exits 1 when a budget fails, and the failure names the worst step and its figure", "[cli][check]")
{
    const std::string dir = scratch_dir("check_fail");
    const auto result = run_fp8scope({ "check", kFp8Trace, "--max-bubble-ratio", "0.5", "--max-syncs-per-step", "1",
        "--junit", dir + "/check.xml", "--md", dir + "/check.md" });
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.out.find("FAIL max-bubble-ratio            0.676") != std::string::npos);
    const std::string junit = read_text_file(dir + "/check.xml");
    CHECK(occurrences(junit, "<testcase ") == 2);
    CHECK(occurrences(junit, "<failure ") == 1);
    CHECK(junit.find("bubble-ratio = 0.676 exceeds the budget 0.500; worst step ") != std::string::npos);
    CHECK(read_text_file(dir + "/check.md").find("**FAIL**") != std::string::npos);
}

TEST_CASE("check without a budget, with a bad budget or a bad trace gives 2 or 3 and one line", "[cli][check]")
{
    for (const auto& args : std::vector<std::vector<std::string>> { { "check", kFp8Trace },
             { "check", kFp8Trace, "--max-bubble-ratio", "1.5" }, { "check", kFp8Trace, "--max-syncs-per-step", "-1" },
             { "check", kFp8Trace, "--max-bubble-ratio", "0.3", "--steps", "7:3" } }) {
        const auto result = run_fp8scope(args);
        INFO(result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.err.starts_with("fp8scope: usage error: "));
    }
    const std::string dir = scratch_dir("check_bad");
    write_file(dir + "/junk.sqlite", "not a trace");
    check_bad_trace(run_fp8scope({ "check", dir + "/junk.sqlite", "--max-bubble-ratio", "0.3" }));
}

TEST_CASE("check cannot write its JUnit file: exit 74 and one line", "[cli][check]")
{
    const auto result
        = run_fp8scope({ "check", kFp8Trace, "--max-bubble-ratio", "0.9", "--junit", "/proc/nope/check.xml" });
    CHECK(result.exit_code == 74);
    CHECK(result.err.starts_with("fp8scope: error: cannot write '/proc/nope/check.xml'"));
}
