// BackgroundWriter: the one thread that owns a TraceDb (docs/collector.md "Hot path"). Producers post tasks; the thread
// runs them in order against the TraceDb and commits at least once per commit interval, also when no task arrives. The
// thread is created with all signals blocked, so it never runs the host's signal handlers.
//
// In the collector a task decodes one CUPTI buffer into rows and returns the buffer to the pool, so the CUPTI
// callback only hands buffers off.
#pragma once

#include "fp8scope/format/trace_db.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace fp8scope {

struct BackgroundWriterOptions {
    size_t max_queued_tasks = 4096; // post() refuses beyond this instead of growing without bound
    std::chrono::milliseconds wake_interval { 100 }; // how often an idle thread checks commit_if_due()
};

class BackgroundWriter {
public:
    using Task = std::function<void(TraceDb&)>;

    static Expected<std::unique_ptr<BackgroundWriter>> start(
        std::unique_ptr<TraceDb> db, const BackgroundWriterOptions& options = {});
    ~BackgroundWriter(); // finishes with reason "destroyed" if finish() was not called
    BackgroundWriter(const BackgroundWriter&) = delete;
    BackgroundWriter& operator=(const BackgroundWriter&) = delete;

    // Thread-safe. Returns false, and runs nothing, when the queue is full or the writer has finished; the caller
    // counts what it could not post as dropped.
    bool post(Task task);

    // Runs every task posted before this call, then finishes the trace and joins the thread. Idempotent.
    Expected<void> finish(const FinishInfo& info);

    // A snapshot, refreshed by the writer thread after each commit. Thread-safe.
    WriterCounters counters() const;

private:
    struct Impl;
    explicit BackgroundWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace fp8scope
