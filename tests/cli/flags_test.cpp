// Flags by habit (issue 28 item 6): "did you mean" for a mistyped option, --steps N for one step, and a step range
// that falls in the warm-up names --warmup 0. On the real FP8 trace (30 NVTX steps, 2 of warm-up).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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

TEST_CASE("--steps N analyses step N alone", "[cli][flags]")
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
    const auto doc
        = nlohmann::json::parse(run_fp8scope_ok({ "report", kFp8, "--steps", "0:1", "--warmup", "0", "--format", "json" }));
    CHECK(doc["steps"]["steps"].size() == 2);
    // Past the last step it is the usual message.
    const auto past = run_fp8scope({ "report", kFp8, "--steps", "90:99" });
    CHECK(past.exit_code == 2);
    CHECK(past.err.find("falls in the warm-up") == std::string::npos);
    CHECK(past.err.find("selects none of") != std::string::npos);
}
