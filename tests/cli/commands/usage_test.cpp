// Usage errors exit with 2 and say what was wrong plus where to look; --help and --version exit with 0.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

void check_usage_error(const testing::ProcessResult& result, const std::string& hint_command)
{
    INFO("exit code " << result.exit_code << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err);
    CHECK_FALSE(result.signaled);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(result.err.starts_with("fp8scope: usage error: "));
    CHECK(result.err.find("Run '" + hint_command + " --help'") != std::string::npos);
}

} // namespace

TEST_CASE("usage error: no arguments", "[cli][usage]")
{
    check_usage_error(run_fp8scope({}), "fp8scope");
}

TEST_CASE("usage error: an unknown subcommand", "[cli][usage]")
{
    const auto result = run_fp8scope({ "frobnicate", "trace.sqlite" });
    check_usage_error(result, "fp8scope");
    CHECK(result.err.find("frobnicate") != std::string::npos);
}

TEST_CASE("usage error: an unknown option", "[cli][usage]")
{
    check_usage_error(run_fp8scope({ "--no-such-option" }), "fp8scope");
}

TEST_CASE("usage error: info without TRACE", "[cli][usage]")
{
    const auto result = run_fp8scope({ "info" });
    check_usage_error(result, "fp8scope info");
    CHECK(result.err.find("TRACE") != std::string::npos);
}

TEST_CASE("usage error: info --format xml", "[cli][usage]")
{
    // The trace need not exist: arguments are checked before any file is opened.
    const auto result = run_fp8scope({ "info", "trace.sqlite", "--format", "xml" });
    check_usage_error(result, "fp8scope info");
    CHECK(result.err.find("xml") != std::string::npos);
}

TEST_CASE("fp8scope --version prints the project version", "[cli][usage]")
{
    const auto result = run_fp8scope({ "--version" });
    CHECK(result.exit_code == 0);
    CHECK(result.out == "fp8scope " FP8SCOPE_PROJECT_VERSION "\n");
    CHECK(result.err.empty());
}

TEST_CASE("fp8scope --help lists the info subcommand with examples and exit codes", "[cli][usage]")
{
    const auto result = run_fp8scope({ "--help" });
    INFO(result.out);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("info") != std::string::npos);
    CHECK(result.out.find("Examples:") != std::string::npos);
    CHECK(result.out.find("Exit codes:") != std::string::npos);
}

TEST_CASE("info --help shows its options and examples", "[cli][usage]")
{
    const auto result = run_fp8scope({ "info", "--help" });
    INFO(result.out);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("TRACE") != std::string::npos);
    CHECK(result.out.find("--format") != std::string::npos);
    CHECK(result.out.find("Examples:") != std::string::npos);
    CHECK(result.out.find("fp8scope info samples/traces/scenario-demo.sqlite") != std::string::npos);
}
