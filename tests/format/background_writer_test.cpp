// BackgroundWriter: tasks from several threads all land, idle commits happen, the queue is bounded, and the
// writer thread runs with every signal blocked.
#include "format_test_support.hpp"

#include "fp8scope/format/background_writer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <future>
#include <pthread.h>
#include <thread>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

std::unique_ptr<BackgroundWriter> start_writer(
    const std::string& path, TraceDbOptions db_options = {}, BackgroundWriterOptions options = {})
{
    auto db = TraceDb::create(path, test_session(), db_options);
    REQUIRE(db.has_value());
    auto writer = BackgroundWriter::start(std::move(*db), options);
    REQUIRE(writer.has_value());
    return std::move(*writer);
}

// A task that adds `count` kernels with correlation ids first, first + 1, ... It runs on the writer thread,
// where Catch2's assertions must not be used; a failed insert shows in the row counts the tests check.
BackgroundWriter::Task kernels_task(uint32_t first, uint32_t count)
{
    return [first, count](TraceDb& db) {
        KernelRow k;
        k.config.mangled_name = db.intern("_Z4stepv");
        for (uint32_t i = 0; i < count; ++i) {
            k.correlation_id = first + i;
            k.start_ns = int64_t { first + i } * 1000;
            k.end_ns = k.start_ns + 500;
            (void)db.add_kernel(k);
        }
    };
}

} // namespace

TEST_CASE("rows posted from several threads all land in the trace")
{
    const std::string path = scratch_path("writer_threads.sqlite");
    auto writer = start_writer(path);
    constexpr uint32_t kThreads = 4;
    constexpr uint32_t kTasksPerThread = 50;
    constexpr uint32_t kKernelsPerTask = 100;
    std::vector<std::thread> producers;
    std::atomic<int> refused { 0 };
    for (uint32_t t = 0; t < kThreads; ++t) {
        producers.emplace_back([&, t] {
            for (uint32_t i = 0; i < kTasksPerThread; ++i) {
                const uint32_t first = t * 1'000'000 + i * kKernelsPerTask + 1;
                if (!writer->post(kernels_task(first, kKernelsPerTask)))
                    ++refused;
            }
        });
    }
    for (auto& p : producers)
        p.join();
    REQUIRE(writer->finish({ .reason = "exit", .session_end_ns = 1 }).has_value());
    CHECK(refused == 0);
    constexpr int64_t kTotal = kThreads * kTasksPerThread * kKernelsPerTask;
    const WriterCounters counters = writer->counters();
    CHECK(counters.kernels_committed == kTotal);
    CHECK(counters.rows_committed == counters.rows_written);
    CHECK(counters.commits >= 2); // the schema's, and finish()'s

    SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == kTotal);
    CHECK(file.integer("SELECT count(DISTINCT correlationId) FROM FP8SCOPE_KERNEL") == kTotal);
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "1");
    // Each task's rows are contiguous: tasks run one at a time, in the order they were queued.
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL AS a JOIN FP8SCOPE_KERNEL AS b ON b.id = a.id + 1 "
                       "WHERE (a.correlationId - 1) % 100 != 99 AND b.correlationId != a.correlationId + 1")
        == 0);
}

TEST_CASE("the writer commits on its own when no task arrives and another connection sees the rows")
{
    const std::string path = scratch_path("writer_idle_commit.sqlite");
    auto writer = start_writer(path, { .commit_interval = std::chrono::milliseconds(50) },
        { .max_queued_tasks = 16, .wake_interval = std::chrono::milliseconds(10) });
    REQUIRE(writer->post(kernels_task(1, 10)));
    // Nothing else is posted. Wait (bounded, as a hang guard only) until a separate read-only connection sees
    // the rows while the writer still holds the file open.
    int64_t seen = 0;
    for (int attempt = 0; attempt < 1000 && seen != 10; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        SqliteFile reader(path);
        seen = reader.integer("SELECT count(*) FROM FP8SCOPE_KERNEL");
    }
    CHECK(seen == 10);
    CHECK(writer->counters().kernels_committed == 10);
    {
        SqliteFile reader(path);
        CHECK(reader.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "0");
    }
    const auto finished = writer->finish({});
    INFO((finished ? std::string() : finished.error().message));
    REQUIRE(finished.has_value());
}

TEST_CASE("post refuses when the queue is full and after finish and finish is idempotent")
{
    const std::string path = scratch_path("writer_bounded.sqlite");
    auto writer = start_writer(path, {}, { .max_queued_tasks = 2, .wake_interval = std::chrono::milliseconds(10) });
    std::promise<void> started;
    std::promise<void> release;
    auto release_future = release.get_future().share();
    REQUIRE(writer->post([&](TraceDb& db) {
        started.set_value();
        release_future.wait();
        kernels_task(1, 1)(db);
    }));
    started.get_future().wait(); // the first task has left the queue and is running
    CHECK(writer->post(kernels_task(2, 1)));
    CHECK(writer->post(kernels_task(3, 1)));
    CHECK_FALSE(writer->post(kernels_task(4, 1))); // two queued: full
    release.set_value();
    REQUIRE(writer->finish({ .reason = "test", .session_end_ns = 0 }).has_value());
    CHECK(writer->finish({ .reason = "again", .session_end_ns = 0 }).has_value());
    CHECK_FALSE(writer->post(kernels_task(5, 1)));
    SqliteFile file(path);
    CHECK(file.rows("SELECT correlationId FROM FP8SCOPE_KERNEL ORDER BY id")
        == std::vector<Row> { { "1" }, { "2" }, { "3" } });
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finish_reason'") == "test");
}

TEST_CASE("the writer thread blocks every signal and the caller's mask is restored")
{
    const std::string path = scratch_path("writer_signals.sqlite");
    sigset_t before;
    pthread_sigmask(SIG_SETMASK, nullptr, &before);
    REQUIRE_FALSE(sigismember(&before, SIGTERM));
    auto writer = start_writer(path);
    sigset_t after;
    pthread_sigmask(SIG_SETMASK, nullptr, &after);
    for (int sig : { SIGINT, SIGTERM, SIGUSR1, SIGCHLD, SIGPROF })
        CHECK(sigismember(&after, sig) == sigismember(&before, sig));

    std::promise<sigset_t> writer_mask;
    REQUIRE(writer->post([&](TraceDb&) {
        sigset_t mask;
        pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        writer_mask.set_value(mask);
    }));
    const sigset_t mask = writer_mask.get_future().get();
    for (int sig : { SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD, SIGPROF, SIGALRM, SIGPIPE })
        CHECK(sigismember(&mask, sig) == 1);
    REQUIRE(writer->finish({}).has_value());
}

TEST_CASE("destroying a BackgroundWriter without finish finishes with reason destroyed")
{
    const std::string path = scratch_path("writer_destroyed.sqlite");
    {
        auto writer = start_writer(path);
        REQUIRE(writer->post(kernels_task(1, 5)));
    }
    SqliteFile file(path);
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") == 5);
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "1");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finish_reason'") == "destroyed");
}
