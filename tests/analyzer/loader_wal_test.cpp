// Traces in WAL mode: one still being written, and the -wal/-shm leftovers of a writer killed before finish().
// The loader opens them read-only and sees every committed row.
#include "fp8scope/analyzer/trace_loader.hpp"
#include "fp8scope/format/trace_db.hpp"
#include "loader_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

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

} // namespace

TEST_CASE("a trace still being written loads read-only with its committed rows", "[loader][wal]")
{
    const std::string path = scratch_dir("wal_live") + "/live.sqlite";
    const auto writer = open_writer(path);
    REQUIRE(std::filesystem::exists(path + "-wal"));

    auto loaded = load_trace(path);
    INFO((loaded ? std::string() : loaded.error().message));
    REQUIRE(loaded);
    CHECK_FALSE(loaded->meta.finished);
    CHECK(loaded->kernels.size() == kKernels);
    CHECK(loaded->meta.producer == "loader WAL test");
    // The writer can go on after a reader came and went.
    REQUIRE(writer->finish(FinishInfo {}));
    auto finished = load_trace(path);
    REQUIRE(finished);
    CHECK(finished->meta.finished);
}

TEST_CASE("the -wal and -shm files left by a killed writer load read-only", "[loader][wal]")
{
    const std::string dir = scratch_dir("wal_leftover");
    const std::string path = dir + "/writer.sqlite";
    auto writer = open_writer(path);
    // What SIGKILL leaves: the database file and its WAL, as they are while the writer runs.
    const auto wal_bytes = std::filesystem::file_size(path + "-wal");
    REQUIRE(wal_bytes > 0);

    for (const bool with_shm : { true, false }) {
        INFO("with -shm: " << with_shm);
        const std::string copy = dir + (with_shm ? "/killed_shm.sqlite" : "/killed.sqlite");
        std::filesystem::copy_file(path, copy);
        std::filesystem::copy_file(path + "-wal", copy + "-wal");
        if (with_shm)
            std::filesystem::copy_file(path + "-shm", copy + "-shm");

        auto loaded = load_trace(copy);
        INFO((loaded ? std::string() : loaded.error().message));
        REQUIRE(loaded);
        CHECK_FALSE(loaded->meta.finished);
        CHECK(loaded->kernels.size() == kKernels);
        REQUIRE(loaded->kernels.size() > 0);
        CHECK(loaded->strings[loaded->kernels.name[0]] == "wal_kernel");
    }
    writer.reset();
}
