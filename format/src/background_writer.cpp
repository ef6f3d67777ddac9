// BackgroundWriter: a bounded task queue drained by one thread that owns the TraceDb.
//
// A mutex and condition variable are enough here: producers are CUPTI's buffer-completion thread and the
// collector's own threads, never the application's launch path (docs/collector.md "Hot path").
#include "fp8scope/format/background_writer.hpp"

#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <system_error>
#include <thread>
#include <utility>

namespace fp8scope {

struct BackgroundWriter::Impl {
    std::unique_ptr<TraceDb> db;
    BackgroundWriterOptions options;

    mutable std::mutex mutex;
    std::condition_variable wake;
    std::deque<Task> queue; // guarded by mutex
    bool stopping = false; // guarded by mutex; set by finish(), after which post() refuses
    FinishInfo finish_info; // guarded by mutex
    WriterCounters published; // guarded by mutex

    std::thread thread;
    std::once_flag finish_once;
    Expected<void> finish_result;

    void publish(const WriterCounters& counters)
    {
        std::lock_guard lock(mutex);
        published = counters;
    }

    // Commits if due and publishes the counters when that made a commit.
    void commit_if_due()
    {
        const int64_t commits_before = db->counters().commits;
        // An error is a disk problem that the next commit retries; the TraceDb stays usable.
        (void)db->commit_if_due();
        if (db->counters().commits != commits_before)
            publish(db->counters());
    }

    void run()
    {
        for (;;) {
            Task task;
            bool stop = false;
            FinishInfo info;
            {
                std::unique_lock lock(mutex);
                wake.wait_for(lock, options.wake_interval, [&] { return !queue.empty() || stopping; });
                // One task at a time, so the queue's bound is exact and a commit can follow every task.
                if (!queue.empty()) {
                    task = std::move(queue.front());
                    queue.pop_front();
                } else {
                    stop = stopping;
                    info = finish_info;
                }
            }
            if (task) {
                // The collector must never take the job down: a task that throws (bad_alloc) loses its rows.
                try {
                    task(*db);
                } catch (...) {
                }
            }
            // After every task and on every idle wake-up: rows must not wait for their commit longer than the
            // commit interval, whether tasks keep coming or not.
            commit_if_due();
            if (stop) {
                // finish() set `stopping` under the mutex, and the queue was empty when we saw it: every task
                // posted before finish() has run, and post() refuses everything after.
                finish_result = db->finish(info);
                publish(db->counters());
                return;
            }
        }
    }
};

Expected<std::unique_ptr<BackgroundWriter>> BackgroundWriter::start(
    std::unique_ptr<TraceDb> db, const BackgroundWriterOptions& options)
{
    if (!db)
        return make_error(ErrorCode::Usage, "BackgroundWriter::start: no trace");
    auto impl = std::make_unique<Impl>();
    impl->db = std::move(db);
    impl->options = options;
    impl->published = impl->db->counters();

    // The thread inherits the signal mask of its creator: block everything while creating it, so the host's
    // signal handlers never run on the writer thread (heaptrack does the same), then restore the caller's mask.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::optional<Error> error;
    try {
        impl->thread = std::thread([raw = impl.get()] { raw->run(); });
    } catch (const std::system_error& e) {
        error = Error { ErrorCode::Io, impl->db->path() + ": cannot start the writer thread: " + e.what() };
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (error)
        return std::unexpected(std::move(*error));
    return std::unique_ptr<BackgroundWriter>(new BackgroundWriter(std::move(impl)));
}

BackgroundWriter::BackgroundWriter(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl))
{
}

BackgroundWriter::~BackgroundWriter()
{
    (void)finish(FinishInfo { .reason = "destroyed", .session_end_ns = 0 });
}

bool BackgroundWriter::post(Task task)
{
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->stopping || impl_->queue.size() >= impl_->options.max_queued_tasks)
            return false;
        impl_->queue.push_back(std::move(task));
    }
    impl_->wake.notify_one();
    return true;
}

Expected<void> BackgroundWriter::finish(const FinishInfo& info)
{
    std::call_once(impl_->finish_once, [&] {
        {
            std::lock_guard lock(impl_->mutex);
            impl_->stopping = true;
            impl_->finish_info = info;
        }
        impl_->wake.notify_one();
        impl_->thread.join();
    });
    return impl_->finish_result;
}

WriterCounters BackgroundWriter::counters() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->published;
}

} // namespace fp8scope
