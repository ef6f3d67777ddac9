// TraceDb's file handling: no clobbering, no symlinks, commits, interning, finish, and closing unfinished.
#include "format_test_support.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

KernelRow kernel_row(StringId name, int64_t start_ns, uint32_t correlation_id)
{
    KernelRow k;
    k.start_ns = start_ns;
    k.end_ns = start_ns + 10;
    k.correlation_id = correlation_id;
    k.config.mangled_name = name;
    return k;
}

} // namespace

TEST_CASE("create refuses an existing file and leaves it unchanged")
{
    const std::string path = scratch_path("lifecycle_existing.sqlite");
    {
        std::ofstream(path) << "another process's trace";
    }
    auto db = TraceDb::create(path, test_session());
    REQUIRE_FALSE(db.has_value());
    CHECK(db.error().code == ErrorCode::Io);
    CHECK(db.error().message == path + ": cannot create the trace: File exists");
    CHECK(read_file(path) == "another process's trace");
    CHECK_FALSE(file_exists(path + "-wal"));
}

TEST_CASE("create refuses a symlink dangling or not and does not touch its target")
{
    const std::string target = scratch_path("lifecycle_symlink_target.sqlite");
    const std::string link = scratch_path("lifecycle_symlink.sqlite");
    std::filesystem::create_symlink(target, link);

    SECTION("dangling: the target is not created")
    {
        auto db = TraceDb::create(link, test_session());
        REQUIRE_FALSE(db.has_value());
        CHECK(db.error().code == ErrorCode::Io);
        CHECK(db.error().message.find(link) == 0);
        CHECK_FALSE(file_exists(target));
    }
    SECTION("pointing at a file: the file is unchanged")
    {
        {
            std::ofstream(target) << "precious";
        }
        auto db = TraceDb::create(link, test_session());
        REQUIRE_FALSE(db.has_value());
        CHECK(db.error().code == ErrorCode::Io);
        CHECK(read_file(target) == "precious");
    }
    CHECK(std::filesystem::is_symlink(link));
}

TEST_CASE("create in a place that cannot hold a file gives ErrorCode::Io with one line naming the path")
{
    const std::string dir = scratch_path("lifecycle_unwritable");
    std::filesystem::create_directories(dir);
    const std::string not_a_dir = scratch_path("lifecycle_plain_file");
    {
        std::ofstream(not_a_dir) << "x";
    }
    std::vector<std::string> paths = { dir + "/missing/trace.sqlite", not_a_dir + "/trace.sqlite" };
    // Permission bits do not stop root, so the read-only directory case only means something for other users.
    if (::geteuid() != 0) {
        ::chmod(dir.c_str(), 0555);
        paths.push_back(dir + "/trace.sqlite");
    }
    for (const std::string& path : paths) {
        INFO(path);
        auto db = TraceDb::create(path, test_session());
        REQUIRE_FALSE(db.has_value());
        CHECK(db.error().code == ErrorCode::Io);
        CHECK(db.error().message.starts_with(path + ": cannot create the trace: "));
        CHECK(db.error().message.find('\n') == std::string::npos);
    }
    ::chmod(dir.c_str(), 0755);
}

TEST_CASE("intern gives one id per distinct string and StringIds holds each once")
{
    const std::string path = scratch_path("lifecycle_intern.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    TraceDb& t = **db;
    const StringId a = t.intern("cudaLaunchKernel_v7000");
    const StringId b = t.intern("cudaMemcpyAsync_v3020");
    CHECK(a.value != b.value);
    CHECK(t.intern("cudaLaunchKernel_v7000") == a);
    CHECK(t.intern(std::string("cudaMemcpyAsync_v3020")) == b);
    const StringId empty = t.intern("");
    CHECK(t.intern("") == empty);
    CHECK(empty.value != a.value);
    REQUIRE(t.finish({}).has_value());
    SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM StringIds") == 3);
    CHECK(file.integer("SELECT count(DISTINCT value) FROM StringIds") == 3);
    CHECK(file.value("SELECT value FROM StringIds WHERE id = " + std::to_string(a.value)) == "cudaLaunchKernel_v7000");
}

TEST_CASE("1000 launches of 2 configs store 2 config rows and names are derived once per mangled name")
{
    const std::string path = scratch_path("lifecycle_configs.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    TraceDb& t = **db;
    const StringId name = t.intern("_ZN7cutlass7Kernel2I15cutlass_80_gemmEEvNT_6ParamsE");
    for (int i = 0; i < 1000; ++i) {
        KernelRow k = kernel_row(name, i * 100, static_cast<uint32_t>(i + 1));
        k.config.grid = { i % 2 == 0 ? 64 : 128, 1, 1 }; // two configs of the same kernel
        REQUIRE(t.add_kernel(k).has_value());
    }
    REQUIRE(t.finish({}).has_value());
    SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 1000);
    CHECK(file.rows("SELECT id, gridX FROM FP8SCOPE_KERNEL_CONFIG ORDER BY id")
        == std::vector<Row> { { "1", "64" }, { "2", "128" } });
    CHECK(file.rows("SELECT configId, count(*) FROM FP8SCOPE_KERNEL GROUP BY configId")
        == std::vector<Row> { { "1", "500" }, { "2", "500" } });
    // Mangled, demangled and short name: three strings, each once.
    CHECK(file.rows("SELECT value FROM StringIds ORDER BY id")
        == std::vector<Row> { { "_ZN7cutlass7Kernel2I15cutlass_80_gemmEEvNT_6ParamsE" },
            { "void cutlass::Kernel2<cutlass_80_gemm>(cutlass_80_gemm::Params)" }, { "Kernel2" } });
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName = 3") == 1000);
}

TEST_CASE("commit_if_due commits only once the interval has passed and counters follow")
{
    const std::string path = scratch_path("lifecycle_commit.sqlite");
    SECTION("a long interval keeps the transaction open")
    {
        auto db = TraceDb::create(path, test_session(), { .commit_interval = std::chrono::hours(1) });
        REQUIRE(db.has_value());
        const int64_t commits = (*db)->counters().commits;
        REQUIRE((*db)->add_kernel(kernel_row((*db)->intern("k"), 0, 1)).has_value());
        REQUIRE((*db)->commit_if_due().has_value());
        CHECK((*db)->counters().commits == commits);
        CHECK((*db)->counters().kernels_committed == 0);
        SqliteFile reader(path);
        CHECK(reader.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 0);
    }
    SECTION("a zero interval commits at once, and an empty transaction is not committed")
    {
        auto db = TraceDb::create(path, test_session(), { .commit_interval = std::chrono::milliseconds(0) });
        REQUIRE(db.has_value());
        const int64_t commits = (*db)->counters().commits;
        const int64_t rows = (*db)->counters().rows_committed;
        REQUIRE((*db)->add_kernel(kernel_row((*db)->intern("k"), 0, 1)).has_value());
        CHECK((*db)->counters().rows_written == rows + 3); // "k" (mangled = demangled = short), config, kernel
        REQUIRE((*db)->commit_if_due().has_value());
        CHECK((*db)->counters().commits == commits + 1);
        CHECK((*db)->counters().kernels_committed == 1);
        CHECK((*db)->counters().rows_committed == rows + 3);
        REQUIRE((*db)->commit_if_due().has_value());
        CHECK((*db)->counters().commits == commits + 1);
        SqliteFile reader(path);
        CHECK(reader.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 1);
    }
}

TEST_CASE("finish marks the trace finished and builds the indexes and leaves one self-contained file")
{
    const std::string path = scratch_path("lifecycle_finish.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    TraceDb& t = **db;
    REQUIRE(t.add_kernel(kernel_row(t.intern("k"), 0, 1)).has_value());
    CHECK(file_exists(path + "-wal")); // recording runs in WAL mode
    REQUIRE(t.finish({ .reason = "SIGTERM", .session_end_ns = 123456 }).has_value());
    CHECK(t.finish({ .reason = "again", .session_end_ns = 0 }).has_value()); // idempotent
    CHECK_FALSE(file_exists(path + "-wal"));
    CHECK_FALSE(file_exists(path + "-shm"));
    auto after = t.add_kernel(kernel_row(StringId { 1 }, 0, 2));
    REQUIRE_FALSE(after.has_value());
    CHECK(after.error().code == ErrorCode::Usage);

    SqliteFile file(path);
    CHECK(file.value("PRAGMA journal_mode") == "delete");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "1");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finish_reason'") == "SIGTERM");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'session_end_ns'") == "123456");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") == "0");
    for (const schema::Index& index : schema::kIndexes) {
        INFO(index.name);
        CHECK(file.value("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = '"
                  + std::string(index.name) + "'")
            == index.table);
    }
    CHECK(file.value("PRAGMA integrity_check") == "ok");
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 1);
}

TEST_CASE("destroying a TraceDb without finish keeps its rows and leaves the trace unfinished")
{
    const std::string path = scratch_path("lifecycle_unfinished.sqlite");
    {
        auto db = TraceDb::create(path, test_session(), { .commit_interval = std::chrono::hours(1) });
        REQUIRE(db.has_value());
        const StringId name = (*db)->intern("k");
        for (uint32_t i = 1; i <= 100; ++i)
            REQUIRE((*db)->add_kernel(kernel_row(name, i * 10, i)).has_value());
    }
    SqliteFile file(path);
    REQUIRE(file.is_open());
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 100);
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "0");
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_META WHERE key = 'finish_reason'") == 0);
}

TEST_CASE("an SQLite error comes back as one Io line naming the file and the TraceDb stays usable")
{
    const std::string path = scratch_path("lifecycle_error.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    TraceDb& t = **db;
    TensorSiteRow site;
    site.id = 1;
    site.name = t.intern("w");
    REQUIRE(t.add_tensor_site(site).has_value());
    auto duplicate = t.add_tensor_site(site); // same primary key
    REQUIRE_FALSE(duplicate.has_value());
    CHECK(duplicate.error().code == ErrorCode::Io);
    CHECK(duplicate.error().message
        == path + ": cannot insert into FP8SCOPE_TENSOR_SITE: UNIQUE constraint failed: FP8SCOPE_TENSOR_SITE.id");
    site.id = 2;
    REQUIRE(t.add_tensor_site(site).has_value());
    REQUIRE(t.finish({}).has_value());
    SqliteFile file(path);
    CHECK(file.rows("SELECT id FROM FP8SCOPE_TENSOR_SITE ORDER BY id") == std::vector<Row> { { "1" }, { "2" } });
}

TEST_CASE("finish while another connection holds the file keeps the finished trace and reports the WAL left behind")
{
    const std::string path = scratch_path("lifecycle_finish_busy.sqlite");
    auto db = TraceDb::create(path, test_session());
    REQUIRE(db.has_value());
    REQUIRE((*db)->add_kernel(kernel_row((*db)->intern("k"), 0, 1)).has_value());
    {
        SqliteFile reader(path); // e.g. `fp8scope info` run on the trace while it is being recorded
        REQUIRE(reader.is_open());
        REQUIRE(reader.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "0");
        auto finished = (*db)->finish({ .reason = "exit", .session_end_ns = 5 });
        REQUIRE_FALSE(finished.has_value());
        CHECK(finished.error().code == ErrorCode::Io);
        CHECK(finished.error().message.starts_with(path + ": cannot leave WAL mode: "));
    }
    SqliteFile file(path);
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "1");
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 1);
    CHECK(file.integer("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'FP8SCOPE_IDX_%'")
        == static_cast<int64_t>(std::size(schema::kIndexes)));
}
