// The environment `fp8scope record` gives the command (the collector contract in docs/cli.md), seen from inside
// a shell it runs, and its manifest handling.
#include "cli_test_support.hpp"
#include "record_test_support.hpp"
#include "trace_info/record_summary.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::record_test;
using cli_test::scratch_dir;

namespace {

// Prints the variables record sets, one per line as NAME=value (empty when unset), and whether the manifest
// file exists while the command runs.
const std::string kPrintEnvironment = R"(for v in CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH LD_PRELOAD \
    FP8SCOPE_OUTPUT FP8SCOPE_LATENCY_TIMESTAMPS FP8SCOPE_NVTX FP8SCOPE_QUIET; do
  eval "echo $v=\${$v}"
done
test -f "$FP8SCOPE_MANIFEST" && test ! -s "$FP8SCOPE_MANIFEST" && echo "FP8SCOPE_MANIFEST=$FP8SCOPE_MANIFEST")";

std::string value_of(const std::string& out, const std::string& name)
{
    const auto lines = lines_starting_with(out, name + "=");
    REQUIRE(lines.size() == 1);
    return lines.front().substr(name.size() + 1);
}

} // namespace

TEST_CASE("record sets the collector's variables for the command", "[cli][record]")
{
    const auto dir = scratch_dir("record_environment");
    const auto library = injected_library();
    const auto result = run_record({ "-o", "traces/run-%r-%p.sqlite", "--no-nvtx", "--no-latency-timestamps", "--",
                                       "/bin/sh", "-c", kPrintEnvironment },
        {}, dir);
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "CUDA_INJECTION64_PATH") == library);
    CHECK(value_of(result.out, "NVTX_INJECTION64_PATH") == library);
    CHECK(value_of(result.out, "LD_PRELOAD") == library);
    // Relative to record's directory, made absolute so that processes that change directory write there too;
    // the directory (no %-field in it) is created.
    CHECK(value_of(result.out, "FP8SCOPE_OUTPUT") == dir + "/traces/run-%r-%p.sqlite");
    CHECK(std::filesystem::is_directory(dir + "/traces"));
    CHECK(value_of(result.out, "FP8SCOPE_LATENCY_TIMESTAMPS") == "0");
    CHECK(value_of(result.out, "FP8SCOPE_NVTX") == "0");
    CHECK(value_of(result.out, "FP8SCOPE_QUIET").empty());
    // An empty manifest existed while the command ran, and record removed it afterwards.
    const auto manifest = value_of(result.out, "FP8SCOPE_MANIFEST");
    CHECK(manifest.find("fp8scope-manifest-") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(manifest));
}

TEST_CASE("record -o DIRECTORY writes the collector's default names in it", "[cli][record]")
{
    const auto dir = scratch_dir("record_output_directory");
    std::filesystem::create_directories(dir + "/existing");
    auto result = run_record({ "-o", "existing", "--", "/bin/sh", "-c", "echo $FP8SCOPE_OUTPUT" }, {}, dir);
    CHECK(result.out == dir + "/existing/fp8scope-%h-%p.sqlite\n");
    result = run_record({ "-o", "fresh/", "--", "/bin/sh", "-c", "echo $FP8SCOPE_OUTPUT" }, {}, dir);
    CHECK(result.out == dir + "/fresh/fp8scope-%h-%p.sqlite\n");
    CHECK(std::filesystem::is_directory(dir + "/fresh"));
}

TEST_CASE("record leaves unset what no option asked for", "[cli][record]")
{
    const auto result = run_record(
        { "-q", "--latency-timestamps", "--", "/bin/sh", "-c", kPrintEnvironment }, { { "FP8SCOPE_OUTPUT", "" } });
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(value_of(result.out, "FP8SCOPE_OUTPUT").empty()); // the collector's default applies
    CHECK(value_of(result.out, "FP8SCOPE_LATENCY_TIMESTAMPS") == "1");
    CHECK(value_of(result.out, "FP8SCOPE_NVTX").empty());
    CHECK(value_of(result.out, "FP8SCOPE_QUIET") == "1");
}

TEST_CASE("record puts the collector first in LD_PRELOAD, once", "[cli][record]")
{
    const auto library = injected_library();
    // ASan insists on being first in the initial library list; the preload here is on purpose.
    const Environment asan { { "ASAN_OPTIONS", "verify_asan_link_order=0" } };
    auto env = asan;
    env.emplace_back("LD_PRELOAD", library);
    auto result = run_record({ "--", "/bin/sh", "-c", "echo \"$LD_PRELOAD\"" }, env);
    INFO(result.err);
    CHECK(result.out == library + "\n");

    env = asan;
    env.emplace_back("LD_PRELOAD", "libc.so.6 " + library); // ld.so separates entries with blanks too
    result = run_record({ "--", "/bin/sh", "-c", "echo \"$LD_PRELOAD\"" }, env);
    CHECK(result.out == "libc.so.6 " + library + "\n");

    env = asan;
    env.emplace_back("LD_PRELOAD", "libc.so.6");
    result = run_record({ "--", "/bin/sh", "-c", "echo \"$LD_PRELOAD\"" }, env);
    CHECK(result.out == library + ":libc.so.6\n");
}

TEST_CASE("record warns when it replaces another tool's CUDA injection", "[cli][record]")
{
    const auto result = run_record(
        { "-q", "--", "/bin/sh", "-c", "exit 0" }, { { "CUDA_INJECTION64_PATH", "/opt/other/libinjection.so" } });
    const auto warnings = lines_starting_with(result.err, "fp8scope: warning: CUDA_INJECTION64_PATH was");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings.front().find("/opt/other/libinjection.so") != std::string::npos);
}

TEST_CASE("record summarizes each trace the manifest lists, once, and names unreadable ones", "[cli][record]")
{
    const auto dir = scratch_dir("record_summary_end_to_end");
    const auto good = dir + "/good.sqlite";
    const auto unfinished = dir + "/unfinished.sqlite";
    const auto corrupt = dir + "/corrupt.sqlite";
    cli_test::write_small_trace(good);
    cli_test::write_small_trace(unfinished, false);
    cli_test::write_file(corrupt, "this is not an SQLite database, it only ends like one");
    // A stand-in for the collector: the command appends trace paths to the manifest as traced processes do.
    const std::string script = "for t in " + good + " " + unfinished + " " + good + " " + corrupt
        + "; do echo $t >> \"$FP8SCOPE_MANIFEST\"; done; exit 4";
    const auto result = run_record({ "--", "/bin/sh", "-c", script });
    INFO(result.err);
    CHECK(result.exit_code == 4);
    CHECK(result.out.empty());
    CHECK(result.err.starts_with("fp8scope: 3 traces written\n  trace "));
    CHECK(testing::line_count(result.err) == 5);
    CHECK(lines_starting_with(result.err, "  " + good + " ").size() == 1);
    CHECK(lines_starting_with(result.err, "  " + unfinished + " ").front().find(" unfinished ") != std::string::npos);
    const auto corrupt_line = lines_starting_with(result.err, "  " + corrupt + " ");
    REQUIRE(corrupt_line.size() == 1);
    CHECK(corrupt_line.front().find("unreadable: ") != std::string::npos);

    // -q: the traces are still written, but no summary.
    const auto quiet = run_record({ "-q", "--", "/bin/sh", "-c", script });
    CHECK(quiet.exit_code == 4);
    CHECK(quiet.err.empty());
}

TEST_CASE("record counts the processes that removed their trace for lack of GPU work", "[cli][record]")
{
    const auto dir = scratch_dir("record_removed_traces");
    const auto job = dir + "/job.sqlite";
    cli_test::write_small_trace(job);
    // Stand-ins for the collector: the job's process lists its trace; a compile worker lists its own, then the
    // "-<path>" line of idle_trace.hpp once it has removed it at its exit.
    const std::string worker = "echo " + dir + "/job-1.sqlite >> \"$FP8SCOPE_MANIFEST\"; echo -" + dir
        + "/job-1.sqlite >> \"$FP8SCOPE_MANIFEST\"";
    const auto result = run_record({ "--", "/bin/sh", "-c", "echo " + job + " >> \"$FP8SCOPE_MANIFEST\"; " + worker });
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.err.starts_with("fp8scope: 1 trace written\n"));
    CHECK(lines_starting_with(result.err, "  " + job + " ").size() == 1);
    CHECK(lines_starting_with(result.err, "  " + dir + "/job-1.sqlite").empty()); // not 'unreadable'
    CHECK(lines_starting_with(result.err, "fp8scope: 1 more process initialized CUDA but did no GPU work").size() == 1);

    // Every process that initialized CUDA did no GPU work: the one warning, not "never initialized CUDA", with -q too.
    const auto only_worker = run_record({ "-q", "--", "/bin/sh", "-c", worker });
    CHECK(only_worker.err == cli::no_gpu_work_warning(1));

    // An inner record passes the count on to the outer one, as it does its traces: each says it once.
    const auto nested = run_record({ "--", FP8SCOPE_EXE, "record", "-q", "--", "/bin/sh", "-c", worker },
        { { "ASAN_OPTIONS", "verify_asan_link_order=0" } });
    CHECK(nested.err == cli::no_gpu_work_warning(1) + cli::no_gpu_work_warning(1));
}

TEST_CASE("a record inside a record reports its traces to the outer one too", "[cli][record]")
{
    const auto dir = scratch_dir("record_nested");
    const auto trace = dir + "/inner.sqlite";
    cli_test::write_small_trace(trace);
    // The inner fp8scope runs with the outer one's LD_PRELOAD, which an ASan build would refuse.
    const auto result = run_record(
        { "--", FP8SCOPE_EXE, "record", "-q", "--", "/bin/sh", "-c", "echo " + trace + " >> \"$FP8SCOPE_MANIFEST\"" },
        { { "ASAN_OPTIONS", "verify_asan_link_order=0" } });
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.err.starts_with("fp8scope: 1 trace written\n"));
    CHECK(lines_starting_with(result.err, "  " + trace + " ").size() == 1);
}

TEST_CASE("record puts the Python package and its sitecustomize first on PYTHONPATH, once", "[cli][record]")
{
    // The package is found beside the binary: <build>/bin/fp8scope gives <build>/share/fp8scope/python.
    const std::string python
        = std::filesystem::path(FP8SCOPE_EXE).parent_path().parent_path().string() + "/share/fp8scope/python";
    REQUIRE(std::filesystem::is_regular_file(python + "/fp8scope/_boot/sitecustomize.py"));
    const std::string front = python + "/fp8scope/_boot:" + python;
    auto result = run_record({ "--", "/bin/sh", "-c", "echo \"$PYTHONPATH\"" }, { { "PYTHONPATH", "" } });
    INFO(result.err);
    CHECK(result.out == front + "\n");
    // The job's entries stay, after; ours appear once even when the job already named them.
    result
        = run_record({ "--", "/bin/sh", "-c", "echo \"$PYTHONPATH\"" }, { { "PYTHONPATH", "/x:" + python + ":/y" } });
    CHECK(result.out == front + ":/x:/y\n");
    // FP8SCOPE_PYTHON naming a folder without the package: the job's PYTHONPATH is left as it was.
    result = run_record({ "--", "/bin/sh", "-c", "echo \"$PYTHONPATH\"" },
        { { "PYTHONPATH", "/x" }, { "FP8SCOPE_PYTHON", "/nonexistent" } });
    CHECK(result.out == "/x\n");
}
