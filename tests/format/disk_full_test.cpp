// A full disk while recording (issue 15): a child process records through BackgroundWriter under RLIMIT_FSIZE, so
// the trace's files cannot grow past a few hundred KiB. The child must not die (SIGXFSZ), and the file must stay
// readable with every row accounted for: the rows it holds plus the loss recorded in FP8SCOPE_DROPPED
// (WRITER_ERROR) equal the rows the child tried to write.
#include "format_test_support.hpp"

#include "fp8scope/format/background_writer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::format_test;

namespace {

constexpr uint32_t kTasks = 200;
constexpr uint32_t kKernelsPerTask = 500;
constexpr int64_t kFileLimitBytes = 2 << 20;

// Runs in the forked child, which is single-threaded at that point. Exits with 20 + the number of times the
// write-error report was called (once is right), or 10-13 when it could not even start.
[[noreturn]] void record_into_small_disk(const std::string& path)
{
    rlimit limit { kFileLimitBytes, kFileLimitBytes };
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        ::_exit(12);
    static std::atomic<int> reports { 0 };
    TraceDbOptions options { .commit_interval = std::chrono::milliseconds(20) };
    options.on_write_error = [](const Error&) { reports.fetch_add(1); };
    auto db = TraceDb::create(path, test_session(), options);
    if (!db)
        ::_exit(10);
    auto writer = BackgroundWriter::start(
        std::move(*db), { .max_queued_tasks = 1024, .wake_interval = std::chrono::milliseconds(5) });
    if (!writer)
        ::_exit(11);
    for (uint32_t t = 0; t < kTasks; ++t) {
        const bool posted = (*writer)->post([t](TraceDb& trace) {
            KernelRow k;
            k.config.mangled_name = trace.intern("_Z4stepv");
            for (uint32_t i = 0; i < kKernelsPerTask; ++i) {
                k.correlation_id = t * kKernelsPerTask + i + 1;
                k.start_ns = int64_t { k.correlation_id } * 1000;
                k.end_ns = k.start_ns + 500;
                (void)trace.add_kernel(k);
            }
        });
        if (!posted)
            ::_exit(13);
    }
    // The closing transaction fits where the failed ones were; building the indexes does not, so finish() reports
    // that error: the trace is finished all the same, without its indexes.
    (void)(*writer)->finish({ "exit", 1 });
    writer->reset();
    ::_exit(20 + reports.load());
}

int run_child(const std::string& path)
{
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        record_into_small_disk(path);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

} // namespace

TEST_CASE("a full disk loses rows, never the job, and the loss is in FP8SCOPE_DROPPED")
{
    const std::string path = scratch_path("disk_full.sqlite");
    REQUIRE(run_child(path) == 21);
    SqliteFile file(path);
    REQUIRE(file.is_open());
    const int64_t kernels = file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL");
    const int64_t lost = file.integer("SELECT coalesce(sum(count), 0) FROM FP8SCOPE_DROPPED WHERE source = 3");
    INFO("kernels " << kernels << ", lost " << lost);
    CHECK(kernels > 0);
    CHECK(kernels < int64_t { kTasks } * kKernelsPerTask);
    // Every kernel is in the file or counted lost. The loss also counts the interned strings and configs the
    // rolled-back transactions took with them (inserted again afterwards): a handful of rows.
    const int64_t attempted = int64_t { kTasks } * kKernelsPerTask;
    CHECK(kernels + lost >= attempted);
    CHECK(kernels + lost <= attempted + 64);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") == lost);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == 1);
}
