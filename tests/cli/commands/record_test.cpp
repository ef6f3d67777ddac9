// `fp8scope record` on programs that never initialize CUDA (no GPU here): the job's output and exit code pass
// through unchanged, record adds exactly its one warning, and its own failures have their documented codes.
#include "cli_test_support.hpp"
#include "record/record_launch.hpp"
#include "record_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/stat.h>

using namespace fp8scope;
using namespace fp8scope::record_test;
using cli_test::scratch_dir;

namespace {

const std::string kNoTraceWarning = "fp8scope: warning: no trace was written: the command never initialized CUDA";

#define SHOW(result)                                                                                                   \
    INFO("exit code " << (result).exit_code << "\nstdout:\n" << (result).out << "\nstderr:\n" << (result).err)

void check_usage_error(const testing::ProcessResult& result)
{
    SHOW(result);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(lines_starting_with(result.err, "fp8scope: usage error: ").size() == 1);
    CHECK(result.err.find("Run 'fp8scope record --help'") != std::string::npos);
}

} // namespace

TEST_CASE(
    "record passes a program's output and exit code through and warns once that no trace was written", "[cli][record]")
{
    const auto dir = scratch_dir("record_passthrough");
    const auto result
        = run_record({ "-o", dir + "/t-%p.sqlite", "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 7" });
    SHOW(result);
    CHECK_FALSE(result.signaled);
    CHECK(result.exit_code == 7);
    CHECK(result.out == "out\n");
    CHECK(result.err.find("err\n") != std::string::npos);
    CHECK(lines_starting_with(result.err, "fp8scope: warning:") == std::vector { kNoTraceWarning });
    CHECK(testing::line_count(result.err) == 2);
    CHECK(directory_entries(dir).empty());
}

TEST_CASE("record -q still shows the no-trace warning", "[cli][record]")
{
    const auto result = run_record({ "-q", "--", "/bin/sh", "-c", "exit 0" });
    SHOW(result);
    CHECK(result.exit_code == 0);
    CHECK(result.out.empty());
    CHECK(result.err == kNoTraceWarning + "\n");
}

TEST_CASE("record: the command's options are its own, with or without --", "[cli][record]")
{
    auto result = run_record({ "--", "/bin/sh", "-c", "echo \"$@\"", "sh", "-q", "--help", "-o", "x" });
    CHECK(result.out == "-q --help -o x\n");
    CHECK(result.exit_code == 0);
    // Without --, the command starts at the first word that is not an option of record (or an option's value).
    result = run_record({ "-q", "-o", "/tmp/unused-%p.sqlite", "/bin/echo", "-q", "-o", "--", "x" });
    SHOW(result);
    CHECK(result.out == "-q -o -- x\n");
    CHECK(result.err == kNoTraceWarning + "\n"); // -q reached record: no summary, the warning stays
}

TEST_CASE("record: a command that does not exist exits 127 with one line", "[cli][record]")
{
    auto result = run_record({ "--", "fp8scope-no-such-command" });
    SHOW(result);
    CHECK(result.exit_code == 127);
    CHECK(result.out.empty());
    CHECK(result.err == "fp8scope: error: command not found: fp8scope-no-such-command\n");

    result = run_record({ "--", "/no/such/dir/program" });
    CHECK(result.exit_code == 127);
    CHECK(testing::line_count(result.err) == 1);
    CHECK(result.err.starts_with("fp8scope: error: cannot execute '/no/such/dir/program': "));
}

TEST_CASE("record: a command that is not executable exits 126 with one line", "[cli][record]")
{
    const auto dir = scratch_dir("record_not_executable");
    const auto script = dir + "/script.sh";
    cli_test::write_file(script, "#!/bin/sh\necho ran\n");
    REQUIRE(chmod(script.c_str(), 0644) == 0); // exec needs an x bit even for root
    const auto result = run_record({ "--", script });
    SHOW(result);
    CHECK(result.exit_code == 126);
    CHECK(result.out.empty());
    CHECK(result.err == "fp8scope: error: cannot execute '" + script + "': Permission denied\n");
}

TEST_CASE("record: a command killed by a signal gives 128 + its number", "[cli][record]")
{
    const auto result = run_record({ "--", "/bin/sh", "-c", "kill -TERM $$" });
    SHOW(result);
    CHECK_FALSE(result.signaled); // record itself exits normally
    CHECK(result.exit_code == 128 + 15);
    CHECK(result.err == kNoTraceWarning + "\n");
}

TEST_CASE("record: usage errors exit 2 with one error line", "[cli][record][usage]")
{
    check_usage_error(run_record({}));
    check_usage_error(run_record({ "--" }));
    check_usage_error(run_record({ "-o", "x.sqlite" }));
    check_usage_error(run_record({ "-o", "", "--", "/bin/true" }));
    check_usage_error(run_record({ "--no-such-option", "--", "/bin/true" }));
    check_usage_error(run_record({ "--latency-timestamps", "--no-latency-timestamps", "--", "/bin/true" }));
    const auto result = run_record({ "--no-such-option", "--", "/bin/sh", "-c", "echo ran" });
    CHECK(result.out.empty()); // the command never ran
}

TEST_CASE("record --help shows options, examples and exit codes", "[cli][record][usage]")
{
    const auto result = run_record({ "--help" });
    SHOW(result);
    CHECK(result.exit_code == 0);
    CHECK(result.err.empty());
    for (const char* text : { "-o,--output PATTERN", "--no-nvtx", "-q,--quiet", "--latency-timestamps",
             "Examples:", "fp8scope record -o 'traces/run-%r-%p.sqlite' -- python train.py --precision fp8",
             "Exit codes:", "128+N", "69" })
        CHECK(result.out.find(text) != std::string::npos);
}

TEST_CASE("record: a missing collector library exits 69 with one line and does not run the command", "[cli][record]")
{
    const auto result = run_record({ "--", "/bin/sh", "-c", "echo ran" }, { { "FP8SCOPE_LIBRARY", "/no/lib.so" } });
    SHOW(result);
    CHECK(result.exit_code == 69);
    CHECK(result.out.empty());
    CHECK(result.err == "fp8scope: error: collector library not found: /no/lib.so (set FP8SCOPE_LIBRARY)\n");
}

TEST_CASE("record: a build without the collector says why there is none and how to get one (issue 45)", "[cli][record]")
{
    // This build has the collector (the CUDA toolkit is here), so the message is checked directly, both ways.
    const std::string without = cli::collector_missing_message(false, "/opt/fp8scope/lib/libfp8scope.so", false);
    CHECK(without.find("collector library not found: /opt/fp8scope/lib/libfp8scope.so: this fp8scope was built "
                       "without the collector")
        == 0);
    CHECK(without.find("FP8SCOPE_BUILD_COLLECTOR off, its default when the build is configured without a CUDA "
                       "toolkit with CUPTI")
        != std::string::npos);
    CHECK(without.find("-DFP8SCOPE_BUILD_COLLECTOR=ON") != std::string::npos);
    CHECK(without.find('\n') == std::string::npos);
    // FP8SCOPE_LIBRARY set, or a build that has a collector somewhere else: where it looked.
    CHECK(cli::collector_missing_message(false, "/no/lib.so", true)
        == "collector library not found: /no/lib.so (set FP8SCOPE_LIBRARY)");
    CHECK(cli::collector_missing_message(true, "/no/lib.so", false)
        == "collector library not found: /no/lib.so (set FP8SCOPE_LIBRARY)");
}

TEST_CASE("record finds the collector next to its executable without FP8SCOPE_LIBRARY", "[cli][record]")
{
    const auto expected = std::filesystem::path(FP8SCOPE_EXE).parent_path().parent_path() / "lib/libfp8scope.so";
    const auto result = testing::run_process(
        { "/usr/bin/env", "-u", "FP8SCOPE_LIBRARY", FP8SCOPE_EXE, "record", "--", "/bin/sh", "-c", "exit 3" });
    SHOW(result);
#ifdef FP8SCOPE_COLLECTOR_LIB
    CHECK(result.exit_code == 3);
    CHECK(result.err == kNoTraceWarning + "\n");
#else
    CHECK(result.exit_code == 69);
    CHECK(result.err.find(expected.lexically_normal().string()) != std::string::npos);
#endif
}

TEST_CASE("record with an unwritable output path warns and leaves the job alone", "[cli][record]")
{
    const auto result
        = run_record({ "-o", "/proc/nonexistent/x-%p.sqlite", "--", "/bin/sh", "-c", "echo out; exit 5" });
    SHOW(result);
    CHECK(result.exit_code == 5);
    CHECK(result.out == "out\n");
    const auto warnings = lines_starting_with(result.err, "fp8scope: warning: ");
    CHECK(warnings.size() == testing::line_count(result.err)); // nothing but warnings
    // The command never initialized CUDA, so nobody tried to create a trace: the one warning says so.
    CHECK(warnings.size() == 1);
    CHECK(std::ranges::count(warnings, kNoTraceWarning) == 1);
}

TEST_CASE(
    "record does not blame CUDA when a traced process reported that it could not create its trace", "[cli][record]")
{
    // A process that initialized CUDA but could not be traced writes "!<pid>\t<reason>" to the manifest after
    // printing its own warning (the collector does this; a shell stands in for it here).
    const auto result = run_record({ "--", "/bin/sh", "-c",
        "echo 'fp8scope: warning: cannot create trace (this process is not traced)' >&2; "
        "printf '!%s\\tcannot create trace\\n' $$ >> \"$FP8SCOPE_MANIFEST\"; exit 4" });
    SHOW(result);
    CHECK(result.exit_code == 4);
    const auto warnings = lines_starting_with(result.err, "fp8scope: warning: ");
    CHECK(warnings.size() == 1);
    CHECK(std::ranges::count(warnings, kNoTraceWarning) == 0);
}

TEST_CASE("record reports the exit code even when its caller ignores SIGCHLD", "[cli][record]")
{
    // With SIGCHLD ignored the kernel would reap the command before record could read its exit code.
    const auto result = testing::run_process({ "/usr/bin/env", "--ignore-signal=CHLD",
        "FP8SCOPE_LIBRARY=" + injected_library(), FP8SCOPE_EXE, "record", "--", "/bin/sh", "-c", "exit 9" });
    SHOW(result);
    CHECK(result.exit_code == 9);
    CHECK(result.err == kNoTraceWarning + "\n");
}
