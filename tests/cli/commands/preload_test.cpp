// LD_PRELOAD of libfp8scope.so into programs that never initialize CUDA must change nothing (spec "Collector
// behaviour"): same stdout, stderr and exit code, no trace file, nothing in the manifest. Python's sqlite3 module
// must keep working with the collector's statically linked, hidden SQLite in the same process.
// Built only when the collector target exists (FP8SCOPE_COLLECTOR_LIB).
#include "cli_test_support.hpp"
#include "record_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace fp8scope;
using namespace fp8scope::record_test;

namespace {

struct Comparison {
    testing::ProcessResult plain;
    testing::ProcessResult preloaded;
};

// Runs argv twice in a fresh directory, without and with the collector preloaded (and a manifest to fill), and
// checks that the preloaded run left no file behind and wrote nothing to the manifest.
Comparison run_with_and_without_preload(const std::string& test_name, const std::vector<std::string>& argv)
{
    const auto dir = cli_test::scratch_dir(test_name);
    const auto work = dir + "/work";
    std::filesystem::create_directories(work);
    const auto manifest = dir + "/manifest";
    cli_test::write_file(manifest, "");

    Comparison runs;
    runs.plain = testing::run_process(with_environment({}, argv, work));
    runs.preloaded = testing::run_process(with_environment(
        {
            { "LD_PRELOAD", FP8SCOPE_COLLECTOR_LIB }, { "FP8SCOPE_MANIFEST", manifest },
            { "FP8SCOPE_OUTPUT", "" }, // the collector's default: a file in the working directory, if any
        },
        argv, work));
    INFO("preloaded stderr:\n" << runs.preloaded.err);
    CHECK(directory_entries(work).empty());
    CHECK(std::filesystem::file_size(manifest) == 0);
    return runs;
}

void check_same(const Comparison& runs)
{
    INFO("plain: exit " << runs.plain.exit_code << "\n" << runs.plain.out << runs.plain.err);
    INFO("preloaded: exit " << runs.preloaded.exit_code << "\n" << runs.preloaded.out << runs.preloaded.err);
    CHECK(runs.preloaded.signaled == runs.plain.signaled);
    CHECK(runs.preloaded.exit_code == runs.plain.exit_code);
    CHECK(runs.preloaded.out == runs.plain.out);
    CHECK(runs.preloaded.err == runs.plain.err);
}

} // namespace

TEST_CASE("preload: LD_PRELOAD of the collector leaves /bin/true unchanged", "[cli][preload]")
{
    const auto runs = run_with_and_without_preload("preload_true", { "/bin/true" });
    check_same(runs);
    CHECK(runs.preloaded.exit_code == 0);
    CHECK(runs.preloaded.out.empty());
    CHECK(runs.preloaded.err.empty());
}

TEST_CASE("preload: LD_PRELOAD of the collector leaves a shell's output and exit code unchanged", "[cli][preload]")
{
    const auto runs = run_with_and_without_preload("preload_shell", { "/bin/sh", "-c", "echo hello; exit 3" });
    check_same(runs);
    CHECK(runs.preloaded.exit_code == 3);
    CHECK(runs.preloaded.out == "hello\n");
    CHECK(runs.preloaded.err.empty());
}

#ifdef FP8SCOPE_PYTHON3
TEST_CASE("preload: LD_PRELOAD of the collector leaves Python's sqlite3 module working", "[cli][preload]")
{
    // Python's sqlite3 uses the system libsqlite3; the collector's own SQLite must not be the one it binds to.
    const std::string script = R"py(
import sqlite3
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE t (x INTEGER)")
db.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (39,)])
print(sqlite3.sqlite_version)
print(db.execute("SELECT count(*), sum(x) FROM t").fetchone())
print(db.execute("SELECT sqlite_version()").fetchone()[0] == sqlite3.sqlite_version)
)py";
    const auto runs = run_with_and_without_preload("preload_python", { FP8SCOPE_PYTHON3, "-c", script });
    check_same(runs);
    CHECK(runs.preloaded.exit_code == 0);
    CHECK(runs.preloaded.out.ends_with("\n(3, 42)\nTrue\n"));
}
#endif
