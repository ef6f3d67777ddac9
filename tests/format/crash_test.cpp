// The crash test the issue asks for: a child process records through BackgroundWriter and is killed with SIGKILL
// mid-stream. The file must open, be marked unfinished, and hold every kernel whose commit the child had
// reported before the kill.
#include "format_test_support.hpp"

#include "fp8scope/format/background_writer.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

// What the child reports through the pipe after every commit it sees (a 24-byte write is atomic on a pipe).
struct CommitReport {
    int64_t commits;
    int64_t rows_committed;
    int64_t kernels_committed;
};

constexpr uint32_t kKernelsPerTask = 1000;

// Runs in the forked child, which is single-threaded at that point. Never returns; no Catch2 in here.
[[noreturn]] void record_forever(const std::string& path, int report_fd)
{
    auto db = TraceDb::create(path, test_session(), { .commit_interval = std::chrono::milliseconds(50) });
    if (!db)
        ::_exit(10);
    auto writer = BackgroundWriter::start(
        std::move(*db), { .max_queued_tasks = 64, .wake_interval = std::chrono::milliseconds(10) });
    if (!writer)
        ::_exit(11);
    uint32_t next_correlation_id = 1;
    int64_t reported_commits = -1;
    for (;;) {
        const uint32_t first = next_correlation_id;
        const bool posted = (*writer)->post([first](TraceDb& t) {
            KernelRow k;
            k.config.mangled_name = t.intern("_ZN2at6native18elementwise_kernelILi128ELi4EEEvi");
            k.config.grid = { 1024, 1, 1 };
            k.config.block = { 128, 1, 1 };
            for (uint32_t i = 0; i < kKernelsPerTask; ++i) {
                k.correlation_id = first + i;
                k.start_ns = int64_t { first + i } * 2000;
                k.end_ns = k.start_ns + 1500;
                k.stream_id = (first + i) % 8;
                if (!t.add_kernel(k))
                    ::_exit(12);
            }
        });
        if (posted)
            next_correlation_id += kKernelsPerTask;
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(1)); // queue full: let the writer catch up
        const WriterCounters c = (*writer)->counters();
        if (c.commits != reported_commits) {
            const CommitReport report { c.commits, c.rows_committed, c.kernels_committed };
            if (::write(report_fd, &report, sizeof report) != static_cast<ssize_t>(sizeof report))
                ::_exit(13);
            reported_commits = c.commits;
        }
    }
}

} // namespace

TEST_CASE("crash: SIGKILL mid-stream keeps every committed kernel and the trace reads as unfinished")
{
    const std::string path = scratch_path("crash_sigkill.sqlite");
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(fds[0]);
        record_forever(path, fds[1]);
    }
    ::close(fds[1]);

    // Wait for at least 3 commits after the schema's, holding > 10000 kernels, then kill. The deadline only
    // guards against a hang; it is not a timing assertion.
    CommitReport last {};
    int64_t first_commits = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    bool ready = false;
    while (!ready && std::chrono::steady_clock::now() < deadline) {
        pollfd pfd { fds[0], POLLIN, 0 };
        if (::poll(&pfd, 1, 100) <= 0)
            continue;
        CommitReport report {};
        if (::read(fds[0], &report, sizeof report) != static_cast<ssize_t>(sizeof report))
            break; // the child died on its own
        last = report;
        if (first_commits < 0)
            first_commits = report.commits;
        ready = last.commits - first_commits >= 3 && last.kernels_committed > 10000;
    }
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    INFO("child exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    REQUIRE(ready);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    // Reports written before the kill but not yet read still count: they were made before the kill.
    CommitReport report {};
    while (::read(fds[0], &report, sizeof report) == static_cast<ssize_t>(sizeof report))
        last = report;
    ::close(fds[0]);

    // Killed while recording: the WAL is still there (nothing was checkpointed away).
    CHECK(file_exists(path + "-wal"));
    SqliteFile file(path, SQLITE_OPEN_READONLY);
    INFO("open error: " << file.open_error());
    REQUIRE(file.is_open());
    CHECK(file.value("PRAGMA quick_check") == "ok");
    CHECK(file.value("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == "0");
    CHECK(file.integer("SELECT count(*) FROM FP8SCOPE_META WHERE key = 'finish_reason'") == 0);
    const int64_t kernels = file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL");
    INFO("kernels in file " << kernels << ", last reported committed " << last.kernels_committed);
    CHECK(kernels >= last.kernels_committed);
    // Correlation ids 1..N with no gap: the file holds a prefix of what was written, never a hole.
    CHECK(file.integer("SELECT min(correlationId) FROM FP8SCOPE_KERNEL") == 1);
    CHECK(file.integer("SELECT max(correlationId) FROM FP8SCOPE_KERNEL") == kernels);
    CHECK(file.integer("SELECT count(DISTINCT correlationId) FROM FP8SCOPE_KERNEL") == kernels);
    // Whole tasks only: a commit happens between tasks, never inside one.
    CHECK(kernels % kKernelsPerTask == 0);
    // The kernel view and string ids work on the unfinished trace as well.
    CHECK(file.integer("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s "
                       "ON s.id = k.shortName WHERE s.value = 'elementwise_kernel'")
        == kernels);
}
