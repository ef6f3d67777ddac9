// `info` and `report` on what a killed collector leaves (the rows only in the -wal file, no -shm), in a directory the
// process cannot write: the output is that of the clean trace, and the directory is left byte for byte as it was.
#include "cli_test_support.hpp"
#include "readonly_view.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using namespace fp8scope::testing;
using Facts = SmallScenarioFacts;

namespace {

// Copies the trace at `source` into a new WAL-mode file `target` whose every page is in target-wal (no checkpoint,
// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE), and removes target-shm: the layout a collector killed mid-run leaves.
void copy_into_wal_only(const std::string& source, const std::string& target)
{
    sqlite3* from = nullptr;
    sqlite3* to = nullptr;
    REQUIRE(sqlite3_open_v2(source.c_str(), &from, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_open(target.c_str(), &to) == SQLITE_OK);
    int ignored = 0;
    sqlite3_db_config(to, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &ignored);
    REQUIRE(sqlite3_exec(to, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0", nullptr, nullptr, nullptr)
        == SQLITE_OK);
    sqlite3_backup* backup = sqlite3_backup_init(to, "main", from, "main");
    REQUIRE(backup);
    CHECK(sqlite3_backup_step(backup, -1) == SQLITE_DONE);
    CHECK(sqlite3_backup_finish(backup) == SQLITE_OK);
    sqlite3_close(from);
    sqlite3_close(to);
    REQUIRE(std::filesystem::file_size(target + "-wal") > std::filesystem::file_size(target));
    std::filesystem::remove(target + "-shm");
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

TEST_CASE("info and report read a killed collector's -wal from a read-only directory and write nothing", "[cli]")
{
    const std::string root = scratch_dir("readonly_wal");
    const std::string clean = root + "/clean.sqlite";
    write_small_trace(clean);
    const std::string dir = root + "/crashed";
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/trace.sqlite";
    copy_into_wal_only(clean, path);
    const auto before = directory_snapshot(dir);

    const std::vector<std::vector<std::string>> commands
        = { { "info", "--format", "json" }, { "report", "--format", "json" }, { "report" } };
    for (const auto& command : commands) {
        auto args = command;
        args.insert(args.begin() + 1, path);
        INFO(command[0] << " " << command.back());
        const ChildReport report = read_in_child(dir, ReadOnlyView::Permissions, [&] {
            const auto result = run_fp8scope(args);
            return std::to_string(result.exit_code) + "\n" + result.err + "\n" + result.out;
        });
        REQUIRE(report.set_up);
        args[1] = clean;
        const auto expected = run_fp8scope(args);
        REQUIRE(expected.exit_code == 0);
        CHECK(replaced(report.text, path, clean) == "0\n" + expected.err + "\n" + expected.out);
    }
    const auto info = run_fp8scope_ok({ "info", path, "--format", "json" });
    CHECK(nlohmann::json::parse(info).at("row_counts").at("FP8SCOPE_KERNEL") == Facts::kKernels);
    CHECK(directory_snapshot(dir) == before);
}
