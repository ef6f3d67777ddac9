// A full disk while recording (docs/reliability.md "The collector under faults"): a child process records through
// BackgroundWriter under RLIMIT_FSIZE, so the trace's files cannot grow past a few hundred KiB. The child must not die
// (SIGXFSZ), and the file must end finished, with every row accounted for: the rows it holds plus the loss recorded in
// FP8SCOPE_DROPPED (WRITER_ERROR) equal the rows the child tried to write. And the reserve that makes room for that
// record.
#include "format_test_support.hpp"

#include "fp8scope/format/background_writer.hpp"
#include "readonly_view.hpp"
#include "trace_db_storage.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::format_test;
using fp8scope::testing::ChildReport;
using fp8scope::testing::run_on_small_tmpfs;
using fp8scope::testing::skip_test;

namespace {

constexpr uint32_t kTasks = 200;
constexpr uint32_t kKernelsPerTask = 500;

struct Disk {
    int64_t file_limit_bytes = 0;
    int commit_interval_ms = 0;
    std::string fill_dir; // when set: a quarter into the run, another writer fills this directory's file system
};

// Another writer (the job saving a checkpoint) takes every byte left: the trace's next commit fails at its first
// page, with no failed frames of its own in the WAL to be written over.
void fill_file_system(const std::string& dir)
{
    const std::string path = dir + "/checkpoint.bin";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    static constexpr char kBlock[4096] = {};
    while (fd >= 0 && ::write(fd, kBlock, sizeof kBlock) > 0) { }
    if (fd >= 0)
        ::close(fd);
}

// Records kTasks x kKernelsPerTask kernels through BackgroundWriter; returns how often the write-error report ran.
int record(const std::string& path, const Disk& disk)
{
    static std::atomic<int> reports { 0 };
    reports = 0;
    TraceDbOptions options { .commit_interval = std::chrono::milliseconds(disk.commit_interval_ms) };
    options.on_write_error = [](const Error&) { reports.fetch_add(1); };
    auto db = TraceDb::create(path, test_session(), options);
    if (!db)
        return -1;
    auto writer = BackgroundWriter::start(
        std::move(*db), { .max_queued_tasks = 1024, .wake_interval = std::chrono::milliseconds(5) });
    if (!writer)
        return -2;
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
            return -3;
        if (t == kTasks / 4 && !disk.fill_dir.empty()) {
            ::usleep(50'000); // the writer commits what it has
            fill_file_system(disk.fill_dir);
        }
        ::usleep(1000); // about 200 ms of recording, so that 20 ms commits hold a few tasks each
    }
    // The closing transaction fits in the space kept in reserve; the indexes are not built after a storage error,
    // so finish() reports that error: the trace is finished all the same, without its indexes.
    (void)(*writer)->finish({ "exit", 1 });
    writer->reset();
    return reports.load();
}

// Runs in the forked child, which is single-threaded at that point. Exits with 20 + the number of times the
// write-error report was called (once is right), or 10-13 when it could not even start.
[[noreturn]] void record_into_small_disk(const std::string& path, const Disk& disk)
{
    rlimit limit { static_cast<rlim_t>(disk.file_limit_bytes), static_cast<rlim_t>(disk.file_limit_bytes) };
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        ::_exit(10);
    const int reports = record(path, disk);
    ::_exit(reports < 0 ? 10 - reports : 20 + reports);
}

int run_child(const std::string& path, const Disk& disk)
{
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        record_into_small_disk(path, disk);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

} // namespace

TEST_CASE("a full disk loses rows, never the job, and the loss is in FP8SCOPE_DROPPED")
{
    // Limits from below the reserve's share to several MiB, and commits from frequent (small transactions) to rare
    // (one transaction bigger than the reserve, which fails at the limit): the loss is recorded in every case.
    const auto disk = GENERATE(Disk { 640 << 10, 20, {} }, Disk { 1 << 20, 5, {} }, Disk { 1 << 20, 20, {} },
        Disk { 1 << 20, 500, {} }, Disk { 3 << 19, 20, {} }, Disk { 2 << 20, 20, {} }, Disk { 2 << 20, 200, {} },
        Disk { 3 << 19, 50, {} });
    const std::string path = scratch_path("disk_full_" + std::to_string(disk.file_limit_bytes) + "_"
        + std::to_string(disk.commit_interval_ms) + ".sqlite");
    INFO("file limit " << disk.file_limit_bytes << " bytes, commits every " << disk.commit_interval_ms << " ms");
    REQUIRE(run_child(path, disk) == 21);
    SqliteFile file(path);
    REQUIRE(file.is_open());
    const int64_t kernels = file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL");
    const int64_t lost = file.integer("SELECT coalesce(sum(count), 0) FROM FP8SCOPE_DROPPED WHERE source = 3");
    INFO("kernels " << kernels << ", lost " << lost);
    // Frequent commits keep what came before the disk filled. Rare ones can put the whole run in one transaction,
    // which fails at the limit: then the file holds no kernel, and the loss is all of them.
    if (disk.commit_interval_ms <= 20)
        CHECK(kernels > 0);
    CHECK(kernels < int64_t { kTasks } * kKernelsPerTask);
    // Every kernel is in the file or counted lost. The loss also counts the interned strings and configs the
    // rolled-back transaction took with it: a handful of rows.
    const int64_t attempted = int64_t { kTasks } * kKernelsPerTask;
    CHECK(kernels + lost >= attempted);
    CHECK(kernels + lost <= attempted + 64);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") == lost);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") == 1);
    CHECK(file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_KERNEL'") == kernels);
}

namespace {

std::set<std::string> directory_entries(const std::string& directory)
{
    std::set<std::string> names;
    if (DIR* dir = ::opendir(directory.c_str())) {
        while (const dirent* entry = ::readdir(dir))
            names.insert(entry->d_name);
        ::closedir(dir);
    }
    return names;
}

} // namespace

TEST_CASE("the reserve holds real space under no name, and none past the file size limit")
{
    // A folder of its own: the format tests share their scratch folder, and one running beside this one (ctest -j2)
    // adds and removes files there between the two listings below (a CI run failed so).
    const std::string directory = scratch_path("reserve_only");
    std::filesystem::remove_all(directory);
    std::filesystem::create_directories(directory);
    const std::string path = directory + "/reserve.sqlite";
    const auto before = directory_entries(directory);
    auto reserve = writer_detail::SpaceReserve::hold(path, writer_detail::kReserveBytes);
    REQUIRE(reserve.held());
    CHECK(reserve.allocated_bytes() >= writer_detail::kReserveBytes);
    CHECK(directory_entries(directory) == before); // nothing to leave behind, even if the process is killed
    reserve.release();
    CHECK_FALSE(reserve.held());
    CHECK(reserve.allocated_bytes() == 0);

    // A forked child (a DataLoader worker) does not keep the parent's reserve: its copy is closed at the fork, and
    // releasing the child's object does not close whatever file took that number since.
    reserve = writer_detail::SpaceReserve::hold(path, writer_detail::kReserveBytes);
    REQUIRE(reserve.held());
    const int fd = reserve.descriptor();
    const pid_t worker = fork();
    REQUIRE(worker >= 0);
    if (worker == 0) {
        const bool closed = ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
        const int other = ::open("/dev/null", O_RDONLY); // takes the freed number
        reserve.release();
        const bool other_open = ::fcntl(other, F_GETFD) != -1;
        ::_exit(closed && other == fd && other_open ? 0 : 1);
    }
    int worker_status = 0;
    REQUIRE(waitpid(worker, &worker_status, 0) == worker);
    REQUIRE(WIFEXITED(worker_status));
    CHECK(WEXITSTATUS(worker_status) == 0);
    CHECK(::fcntl(fd, F_GETFD) != -1); // still the parent's
    reserve.release();

    // Below the limit the reserve is not taken: the kernel would send SIGXFSZ to the (job's) calling thread.
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        rlimit limit { writer_detail::kReserveBytes / 2, writer_detail::kReserveBytes / 2 };
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
            ::_exit(12);
        const auto small = writer_detail::SpaceReserve::hold(path, writer_detail::kReserveBytes);
        ::_exit(small.held() ? 1 : writer_detail::file_size_limit() == writer_detail::kReserveBytes / 2 ? 0 : 2);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a file system that fills up: the reserve makes room to record the loss")
{
    // A real ENOSPC, on a tmpfs mounted on a scratch directory in a child's own mount namespace. Either the trace
    // fills it, or another writer does between two commits; the closing transaction goes into the space the reserve
    // held (without the reserve, the second case leaves the trace unfinished with the loss unrecorded).
    const bool other_writer = GENERATE(false, true);
    INFO((other_writer ? "another writer fills the disk" : "the trace fills the disk"));
    const std::string dir = scratch_path(other_writer ? "disk_full_other" : "disk_full_tmpfs");
    std::filesystem::create_directories(dir);
    const ChildReport report = run_on_small_tmpfs(dir, 1280 << 10, [&] {
        const std::string path = dir + "/trace.sqlite";
        const int reports = record(path, Disk { 0, 20, other_writer ? dir : "" });
        SqliteFile file(path);
        std::ostringstream out;
        out << reports << ' ' << file.integer("SELECT count(*) FROM FP8SCOPE_KERNEL") << ' '
            << file.integer("SELECT coalesce(sum(count), 0) FROM FP8SCOPE_DROPPED WHERE source = 3") << ' '
            << file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'dropped_records'") << ' '
            << file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'finished'") << ' '
            << file.integer("SELECT value FROM FP8SCOPE_META WHERE key = 'row_count.FP8SCOPE_KERNEL'");
        return out.str();
    });
    if (!report.set_up)
        skip_test("no tmpfs can be mounted here: " + report.text);
    INFO("reports, kernels, lost, dropped_records, finished, row_count: " << report.text);
    std::istringstream in(report.text);
    int64_t reports = -1, kernels = -1, lost = -1, dropped = -1, finished = -1, row_count = -1;
    in >> reports >> kernels >> lost >> dropped >> finished >> row_count;
    const int64_t attempted = int64_t { kTasks } * kKernelsPerTask;
    CHECK(reports == 1);
    CHECK(kernels > 0);
    CHECK(kernels < attempted);
    CHECK(kernels + lost >= attempted);
    CHECK(kernels + lost <= attempted + 64);
    CHECK(dropped == lost);
    CHECK(finished == 1);
    CHECK(row_count == kernels);
}
