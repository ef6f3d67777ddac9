// Every bad input gives exit code 3, exactly one line on stderr and nothing on stdout, never a crash (spec
// "Reliability and security"). The test build with FP8SCOPE_SANITIZE=ON runs these under ASan and UBSan.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

// A finished trace of small_scenario() in a fresh scratch directory, ready to be broken.
std::string good_trace(const std::string& test_name)
{
    const auto path = scratch_dir(test_name) + "/trace.sqlite";
    write_small_trace(path);
    return path;
}

testing::ProcessResult info(const std::string& path, const char* format, bool read_rows = false)
{
    if (read_rows)
        return run_fp8scope({ "info", path, "--format", format, "--read-rows" });
    return run_fp8scope({ "info", path, "--format", format });
}

// Both output formats must fail the same way: nothing half-printed on stdout in either. Damage to the file, its
// header, version, tables or meta fails `info` as it is; damage inside activity rows, which a finished trace's summary
// does not read, fails `info --read-rows` and `report` (check_bad_rows).
void check_bad_in_both_formats(const std::string& path, const std::string& fragment, bool read_rows = false)
{
    for (const char* format : { "text", "json" }) {
        INFO("--format " << format << (read_rows ? " --read-rows" : ""));
        const auto result = info(path, format, read_rows);
        check_bad_trace(result);
        CHECK(result.err.find(fragment) != std::string::npos);
    }
}

void check_bad_rows(const std::string& path, const std::string& fragment)
{
    check_bad_in_both_formats(path, fragment, true);
    const auto report = run_fp8scope({ "report", path });
    check_bad_trace(report);
    CHECK(report.err.find(fragment) != std::string::npos);
    // Plain info reads the finished trace's meta and small tables only: the damaged rows are not its to judge.
    const auto summary = info(path, "text");
    CHECK(summary.exit_code == 0);
    CHECK(summary.out.find("Rows") != std::string::npos);
}

} // namespace

TEST_CASE("bad input: a missing path", "[cli][bad-input]")
{
    const auto path = scratch_dir("bad_missing") + "/no-such-trace.sqlite";
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: the error lines are the ones docs/cli.md quotes", "[cli][bad-input]")
{
    const auto dir = scratch_dir("bad_documented");
    const auto missing = run_fp8scope({ "report", dir + "/run.sqlite" });
    check_bad_trace(missing);
    CHECK(missing.err == "fp8scope: error: cannot open trace '" + dir + "/run.sqlite': No such file or directory\n");
    write_file(dir + "/notes.txt", "This is a text file, not a trace.\n");
    const auto text = run_fp8scope({ "report", dir + "/notes.txt" });
    check_bad_trace(text);
    CHECK(text.err
        == "fp8scope: error: '" + dir
            + "/notes.txt' is not an fp8scope trace or Nsight Systems export: not an SQLite database\n");
}

TEST_CASE("bad input: a directory", "[cli][bad-input]")
{
    const auto dir = scratch_dir("bad_directory");
    check_bad_in_both_formats(dir, dir);
}

TEST_CASE("bad input: an empty file", "[cli][bad-input]")
{
    const auto path = scratch_dir("bad_empty") + "/empty.sqlite";
    write_file(path, "");
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: a text file", "[cli][bad-input]")
{
    const auto path = scratch_dir("bad_text") + "/notes.txt";
    write_file(path, "This is a text file, not a trace.\nIt has two lines.\n");
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: random bytes", "[cli][bad-input]")
{
    const auto path = scratch_dir("bad_random") + "/random.sqlite";
    std::mt19937 generator(20261121); // fixed seed: the same bytes on every run
    std::string bytes(64 * 1024, '\0');
    for (char& byte : bytes)
        byte = static_cast<char>(generator() & 0xFF);
    write_file(path, bytes);
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: random bytes after a valid SQLite header", "[cli][bad-input]")
{
    // Harder than plain noise: SQLite accepts the file as a database and meets the garbage on the first page.
    const auto path = good_trace("bad_random_after_header");
    const auto size = std::filesystem::file_size(path);
    std::string bytes(size, '\0');
    {
        std::FILE* file = std::fopen(path.c_str(), "rb");
        REQUIRE(file != nullptr);
        REQUIRE(std::fread(bytes.data(), 1, bytes.size(), file) == bytes.size());
        std::fclose(file);
    }
    std::mt19937 generator(7);
    for (size_t i = 100; i < bytes.size(); ++i)
        bytes[i] = static_cast<char>(generator() & 0xFF);
    write_file(path, bytes);
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: a truncated trace", "[cli][bad-input]")
{
    const auto path = good_trace("bad_truncated");
    const auto size = std::filesystem::file_size(path);
    REQUIRE(size > 8192);
    std::filesystem::resize_file(path, size / 2);
    check_bad_in_both_formats(path, path);
}

TEST_CASE("bad input: a newer schema version names both versions", "[cli][bad-input]")
{
    const auto path = good_trace("bad_newer_version");
    exec_sql(path,
        "PRAGMA user_version = " + std::to_string(schema::encode_user_version(2, 0))
            + ";"
              "UPDATE FP8SCOPE_META SET value = '2.0' WHERE key = 'schema_version';");
    check_bad_in_both_formats(path, "2.0");
    CHECK(info(path, "text")
              .err.find("(" + std::to_string(schema::kMajorVersion) + "." + std::to_string(schema::kMinorVersion) + ")")
        != std::string::npos);
}

TEST_CASE("bad input: a missing table", "[cli][bad-input]")
{
    const auto path = good_trace("bad_missing_table");
    exec_sql(path, "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME");
    check_bad_in_both_formats(path, "CUPTI_ACTIVITY_KIND_RUNTIME");
}

TEST_CASE("bad input: a NULL where a value belongs", "[cli][bad-input]")
{
    const auto path = good_trace("bad_null");
    drop_not_null(path, "CUPTI_ACTIVITY_KIND_RUNTIME");
    exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL WHERE rowid = 2");
    check_bad_rows(path, "nameId");
}

TEST_CASE("bad input: a negative kernel duration", "[cli][bad-input]")
{
    const auto path = good_trace("bad_negative_duration");
    exec_sql(path, "UPDATE FP8SCOPE_KERNEL SET duration = -5000 WHERE id = (SELECT min(id) FROM FP8SCOPE_KERNEL)");
    check_bad_rows(path, path);
}

TEST_CASE("bad input: an API call that ends before it starts", "[cli][bad-input]")
{
    const auto path = good_trace("bad_negative_api_duration");
    exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = start - 1 WHERE rowid = 1");
    check_bad_rows(path, path);
}

TEST_CASE("bad input: a dangling string id", "[cli][bad-input]")
{
    const auto path = good_trace("bad_dangling_string");
    exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 987654321 WHERE rowid = 1");
    check_bad_rows(path, "987654321");
}

TEST_CASE("bad input: a dangling kernel name id", "[cli][bad-input]")
{
    const auto path = good_trace("bad_dangling_kernel_name");
    exec_sql(path, "UPDATE FP8SCOPE_KERNEL_CONFIG SET demangledName = 987654321");
    check_bad_rows(path, "987654321");
}
