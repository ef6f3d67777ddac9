#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace fp8scope::cli_test {

std::string scratch_dir(const std::string& test_name)
{
    const auto dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "cli" / test_name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

void write_file(const std::string& path, const std::string& bytes)
{
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(file.good());
}

testing::ProcessResult run_fp8scope(const std::vector<std::string>& args)
{
    std::vector<std::string> argv { FP8SCOPE_EXE };
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run_process(argv);
}

std::string run_fp8scope_ok(const std::vector<std::string>& args)
{
    const auto result = run_fp8scope(args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.out;
}

size_t occurrences(const std::string& text, const std::string& what)
{
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

std::string read_text_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return { std::istreambuf_iterator<char>(in), {} };
}

void exec_sql(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    const int open_rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    INFO("open " << path << ": " << (db ? sqlite3_errmsg(db) : "out of memory"));
    REQUIRE(open_rc == SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    const std::string error = message ? message : "";
    sqlite3_free(message);
    sqlite3_close(db);
    INFO("SQL: " << sql << "\nerror: " << error);
    REQUIRE(rc == SQLITE_OK);
}

void drop_not_null(const std::string& path, const std::string& table)
{
    // Read the table's own CREATE statement, strip NOT NULL, create the copy under another name, move the rows,
    // and swap. legacy_alter_table keeps SQLite from rewriting (and validating) views during the rename.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(
                db, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1", -1, &statement, nullptr)
        == SQLITE_OK);
    sqlite3_bind_text(statement, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
    std::string create = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    sqlite3_finalize(statement);
    sqlite3_close(db);

    const std::string copy = table + "_without_not_null";
    const auto name_at = create.find(table);
    REQUIRE(name_at != std::string::npos);
    create.replace(name_at, table.size(), copy);
    for (auto at = create.find(" NOT NULL"); at != std::string::npos; at = create.find(" NOT NULL"))
        create.erase(at, std::string_view(" NOT NULL").size());
    REQUIRE(create.find("NOT NULL") == std::string::npos);

    exec_sql(path,
        "PRAGMA legacy_alter_table = ON; BEGIN; " + create + "; INSERT INTO \"" + copy + "\" SELECT * FROM \"" + table
            + "\"; DROP TABLE \"" + table + "\"; ALTER TABLE \"" + copy + "\" RENAME TO \"" + table + "\"; COMMIT;");
}

testing::Scenario small_scenario()
{
    using Facts = SmallScenarioFacts;
    testing::Scenario s;
    s.session().command_line = Facts::kCommandLine;
    s.session().host = Facts::kHost;
    s.session().rank = 0;
    s.session().world_size = 1;
    s.add_gpu(GpuInfoRow {
        .id = 0,
        .name = Facts::kGpuName,
        .bus_location = "0000:18:00.0",
        .total_memory_bytes = Facts::kTotalMemoryBytes,
        .memory_bandwidth_bytes_per_s = 3'352'320'000'000,
        .clock_rate_hz = 1'980'000'000,
        .sm_count = Facts::kSmCount,
        .uuid = "GPU-5b3c0f4e-0000-0000-0000-000000000000",
        .chip_name = "GH100",
        .compute_major = 9,
        .compute_minor = 0,
    });
    const auto host = s.thread(s.session().pid, s.session().pid, "python");
    s.launch(host, { .api_start_ns = Facts::kFirstNs, .api_end_ns = 5'000 },
        { .start_ns = 8'000, .end_ns = 58'000, .name = "sm90_xmma_gemm_e4m3bf16_e4m3f32" });
    s.launch(host, { .api_start_ns = 6'000, .api_end_ns = 9'000 },
        { .start_ns = 60'000, .end_ns = 61'000, .name = "amax_and_scale_update_kernel" });
    s.launch(host, { .api_start_ns = 10'000, .api_end_ns = 12'000 },
        { .start_ns = 62'000, .end_ns = 70'000, .name = "cast_transpose_fp8_kernel" });
    s.sync(host, 13'000, Facts::kLastNs, schema::SyncType::StreamSynchronize, 7u);
    return s;
}

void write_small_trace(const std::string& path, bool finished)
{
    const auto written = small_scenario().write_fp8scope(path, finished);
    INFO((written ? std::string() : written.error().message));
    REQUIRE(written);
}

void check_bad_trace(const testing::ProcessResult& result)
{
    INFO("exit code " << result.exit_code << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err);
    CHECK_FALSE(result.signaled);
    CHECK(result.exit_code == 3);
    CHECK(result.out.empty());
    CHECK(testing::line_count(result.err) == 1);
    CHECK(result.err.ends_with('\n'));
    CHECK(result.err.starts_with("fp8scope: error: "));
}

} // namespace fp8scope::cli_test
