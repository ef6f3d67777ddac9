// Traces in WAL mode: one still being written, and the -wal/-shm leftovers of a writer killed before finish(), read
// from a writable directory, a read-only one and a read-only mount. The loader sees every committed row, including
// rows that are only in the -wal file, and leaves the directory exactly as it found it: no -shm or -journal created,
// no byte of the trace, -wal or -shm changed (sqlite_reader.cpp, uri_query()).
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/format/trace_db.hpp"
#include "loader_test_support.hpp"
#include "readonly_view.hpp"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <filesystem>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
namespace fs = std::filesystem;

namespace {

constexpr int kKernels = 500;

std::unique_ptr<TraceDb> open_writer(const std::string& path)
{
    SessionInfo session;
    session.producer = "loader WAL test";
    session.pid = 77;
    auto db = TraceDb::create(path, session);
    INFO((db ? std::string() : db.error().message));
    REQUIRE(db);
    TraceDb& writer = **db;
    const StringId name = writer.intern("wal_kernel");
    for (int i = 0; i < kKernels; ++i) {
        KernelRow row;
        row.start_ns = i * 10;
        row.end_ns = i * 10 + 5;
        row.stream_id = 7;
        row.correlation_id = static_cast<uint32_t>(i + 1);
        row.config.mangled_name = name;
        REQUIRE(writer.add_kernel(row));
    }
    REQUIRE(writer.commit());
    return std::move(*db);
}

// What a reader reports of the trace, compared as one string so that a child process can send it back.
std::string describe(const Expected<TraceModel>& loaded)
{
    if (!loaded)
        return "error: " + loaded.error().message;
    std::string text = "kernels=" + std::to_string(loaded->kernels.size());
    if (loaded->kernels.size() > 0)
        text += " first=" + std::string(loaded->strings[loaded->kernels.name[0]]);
    return text + (loaded->meta.finished ? " finished" : " unfinished");
}

const std::string kUnfinishedTruth = "kernels=" + std::to_string(kKernels) + " first=wal_kernel unfinished";
const std::string kFinishedTruth = "kernels=" + std::to_string(kKernels) + " first=wal_kernel finished";

// Kernel rows in the main database file alone, as a reader that ignored the -wal file would see them (-1: not even
// the table is there).
int64_t kernels_without_wal(const std::string& path)
{
    sqlite3* db = nullptr;
    const std::string uri = "file:" + path + "?immutable=1";
    REQUIRE(sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    int64_t rows = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM FP8SCOPE_KERNEL", -1, &stmt, nullptr) == SQLITE_OK
        && sqlite3_step(stmt) == SQLITE_ROW)
        rows = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return rows;
}

enum class Leftover { WalAndShm, WalOnly, WalAndZeroedShm, Finished };

const char* to_string(Leftover kind)
{
    switch (kind) {
    case Leftover::WalAndShm:
        return "-wal and -shm";
    case Leftover::WalOnly:
        return "-wal without -shm";
    case Leftover::WalAndZeroedShm:
        return "-wal and an -shm of zeros";
    case Leftover::Finished:
        return "finished, no -wal";
    }
    return "";
}

// One directory per kind under `root`, each holding trace.sqlite as a writer killed after committing kKernels kernels
// leaves it (the files copied while the writer runs, as SIGKILL leaves them), or a finished trace.
std::map<Leftover, std::string> leftovers(const std::string& root)
{
    const std::string source = root + "/source/trace.sqlite";
    fs::create_directories(root + "/source");
    auto writer = open_writer(source);
    REQUIRE(fs::file_size(source + "-wal") > 0);
    // The schema and the kernels are only in the -wal file: a reader that drops it sees nothing.
    REQUIRE(kernels_without_wal(source) != kKernels);
    std::map<Leftover, std::string> dirs;
    for (const Leftover kind : { Leftover::WalAndShm, Leftover::WalOnly, Leftover::WalAndZeroedShm }) {
        const std::string dir = root + "/" + std::to_string(static_cast<int>(kind));
        fs::create_directories(dir);
        fs::copy_file(source, dir + "/trace.sqlite");
        fs::copy_file(source + "-wal", dir + "/trace.sqlite-wal");
        if (kind == Leftover::WalAndShm)
            fs::copy_file(source + "-shm", dir + "/trace.sqlite-shm");
        if (kind == Leftover::WalAndZeroedShm)
            write_file(dir + "/trace.sqlite-shm", std::string(fs::file_size(source + "-shm"), '\0'));
        dirs[kind] = dir;
    }
    REQUIRE(writer->finish(FinishInfo {}));
    writer.reset();
    const std::string finished = root + "/" + std::to_string(static_cast<int>(Leftover::Finished));
    fs::create_directories(finished);
    fs::copy_file(source, finished + "/trace.sqlite");
    REQUIRE_FALSE(fs::exists(source + "-wal"));
    dirs[Leftover::Finished] = finished;
    return dirs;
}

std::vector<std::string> file_names(const std::string& dir)
{
    std::vector<std::string> names;
    for (const auto& [name, bytes] : directory_snapshot(dir))
        names.push_back(name);
    return names;
}

const std::string& truth(Leftover kind)
{
    return kind == Leftover::Finished ? kFinishedTruth : kUnfinishedTruth;
}

} // namespace

TEST_CASE("a trace still being written loads read-only with its committed rows", "[loader][wal]")
{
    const std::string dir = scratch_dir("wal_live");
    const std::string path = dir + "/live.sqlite";
    const auto writer = open_writer(path);
    REQUIRE(fs::exists(path + "-wal"));
    REQUIRE(fs::exists(path + "-shm"));
    const auto before = file_names(dir);

    auto loaded = load_trace(path);
    CHECK(describe(loaded) == kUnfinishedTruth);
    REQUIRE(loaded);
    CHECK(loaded->meta.producer == "loader WAL test");
    // Nothing created. (The -shm file is the live writer's shared memory, which its readers share by design: in this
    // process the reader maps the writer's copy, so its bytes are not compared.)
    CHECK(file_names(dir) == before);
    // The writer can go on after a reader came and went.
    REQUIRE(writer->finish(FinishInfo {}));
    CHECK(describe(load_trace(path)) == kFinishedTruth);
}

TEST_CASE("a killed writer's leftovers load from a writable directory, which is left unchanged", "[loader][wal]")
{
    for (const auto& [kind, dir] : leftovers(scratch_dir("wal_writable"))) {
        INFO(to_string(kind));
        const auto before = directory_snapshot(dir);
        CHECK(describe(load_trace(dir + "/trace.sqlite")) == truth(kind));
        CHECK(directory_snapshot(dir) == before);
    }
}

TEST_CASE("a killed writer's leftovers load from a read-only directory of read-only files", "[loader][wal]")
{
    for (const auto& [kind, dir] : leftovers(scratch_dir("wal_readonly_dir"))) {
        INFO(to_string(kind));
        const auto before = directory_snapshot(dir);
        const std::string path = dir + "/trace.sqlite";
        const ChildReport report
            = read_in_child(dir, ReadOnlyView::Permissions, [&] { return describe(load_trace(path)); });
        INFO(report.text);
        REQUIRE(report.set_up);
        CHECK(report.text == truth(kind));
        CHECK(directory_snapshot(dir) == before);
    }
}

TEST_CASE("a killed writer's leftovers load from a read-only mount", "[loader][wal]")
{
    const auto dirs = leftovers(scratch_dir("wal_readonly_mount"));
    // Whether a mount namespace can be had here is known after the first try.
    for (const auto& [kind, dir] : dirs) {
        INFO(to_string(kind));
        const auto before = directory_snapshot(dir);
        const std::string path = dir + "/trace.sqlite";
        const ChildReport report = read_in_child(dir, ReadOnlyView::Mount, [&] { return describe(load_trace(path)); });
        if (!report.set_up)
            skip_test("no read-only mount can be made here: " + report.text);
        CHECK(report.text == truth(kind));
        CHECK(directory_snapshot(dir) == before);
    }
}
