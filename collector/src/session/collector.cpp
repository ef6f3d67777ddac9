#include "session/collector.hpp"

#include "calls/api_calls.hpp"
#include "session/idle_trace.hpp"
#include "session/manifest.hpp"
#include "session/process_info.hpp"
#include "session/session.hpp"
#include "session/session_callbacks.hpp"
#include "session/warn.hpp"

#include "fp8scope/format/trace_db.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace fp8scope::collector {
namespace {

// The one pointer the C callbacks need (CUPTI's buffer callbacks, NVTX's, the GEMM hooks, the C API, the signal
// handler): set once by publish() and never changed.
std::atomic<Collector*> g_collector { nullptr };

bool exists(const std::string& path)
{
    struct stat st { };
    return ::lstat(path.c_str(), &st) == 0;
}

} // namespace

Collector::Collector(CollectorPlatform& platform)
    : platform_(platform)
{
}

Collector::~Collector()
{
    Session* s = session_.load();
    if (s && s->cupti_settings.api_from_callbacks)
        set_api_call_sink({}); // the sink writes to this session's writer
    delete s;
}

Collector* Collector::get()
{
    return g_collector.load(std::memory_order_acquire);
}

void Collector::publish(Collector& collector)
{
    g_collector.store(&collector, std::memory_order_release);
}

bool Collector::in_owner(const Session& s) const
{
    return process_id() == s.owner_pid;
}

uint64_t Collector::timestamp_now(const Session& s)
{
    if (s.cupti_settings.detach_between_windows)
        return static_cast<uint64_t>(realtime_ns());
    uint64_t t = 0;
    s.cupti->getTimestamp(&t);
    return t;
}

void flush_api_records(const Session& s)
{
    if (s.cupti_settings.api_from_callbacks)
        flush_api_calls();
}

Session* Collector::running_session()
{
    Session* s = session();
    if (!s || state() != State::Running || !in_owner(*s))
        return nullptr;
    return s;
}

void Collector::flush()
{
    Session* s = running_session();
    if (!s)
        return;
    flush_api_records(*s);
    s->attachment->flush_if_attached(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    s->writer->post([](TraceDb& db) { [[maybe_unused]] auto committed = db.commit(); });
}

void Collector::flush_periodic()
{
    Session* s = running_session();
    if (!s)
        return;
    // Flag 0: only records that are complete, without waiting for the device (cupti_activity.h). Nothing when
    // detached between capture windows: nothing to flush, and no CUPTI call may be made.
    if (!s->attachment->flush_if_attached(0))
        return;
    flush_api_records(*s);
    CollectorPlatform& platform = platform_;
    s->writer->post([&platform](TraceDb& db) { platform.harvest_tensor_stats(db, false); });
    s->attachment->arm_detach_when_due();
}

void Collector::CaptureSide::switch_window(bool on, std::atomic<bool>& recording)
{
    Session* s = c_.session();
    if (!s || !c_.in_owner(*s)) {
        recording.store(on);
        return;
    }
    if (on)
        s->attachment->open_window(recording);
    else
        s->attachment->close_window(recording);
}

void Collector::CaptureSide::flush_completed_records()
{
    if (Session* s = c_.running_session())
        s->attachment->flush_if_attached(0); // flag 0: completed records only, never waiting for the device
}

bool Collector::CaptureSide::post_window(const CaptureWindowRow& row)
{
    Session* s = c_.session();
    const State state = c_.state();
    if (!s || !c_.in_owner(*s) || (state != State::Running && state != State::Stopping))
        return false;
    // A bounded recording (record --max-size): where each window starts is noted first, and the oldest windows are
    // dropped while the trace is over its bound (TraceDb::drop_oldest_windows).
    const int64_t max_bytes = row.end_ns ? 0 : s->capture_plan.max_bytes;
    return s->writer->post([row, max_bytes](TraceDb& db) {
        if (max_bytes > 0) {
            auto marked = db.mark_window_start(row.id);
            auto kept = marked ? db.drop_oldest_windows(max_bytes) : Expected<int64_t>(std::unexpected(marked.error()));
            if (!kept)
                collector::warn_once("max-size", "cannot keep the trace under --max-size: " + kept.error().message);
        }
        [[maybe_unused]] auto written = db.set_capture_window(row);
    });
}

void Collector::CaptureSide::note_first_nvtx_step_range()
{
    c_.post_note([](TraceDb& db) { [[maybe_unused]] auto written = db.set_nvtx_step_ranges(1); });
}

void Collector::CaptureSide::warn_once(std::string_view key, std::string_view text)
{
    collector::warn_once(key, text);
}

void Collector::detach_soon()
{
    Session* s = session();
    if (!s || !in_owner(*s))
        return;
    if (s->attachment->detach_soon(now_ns()))
        wake_flusher();
}

void Collector::wake_flusher()
{
    const int fd = lifecycle_.wake[1];
    if (fd < 0)
        return;
    const int saved_errno = errno;
    const unsigned char zero = 0;
    [[maybe_unused]] const ssize_t written = ::write(fd, &zero, 1);
    errno = saved_errno;
}

std::optional<int64_t> Collector::detach_due_ns() const
{
    const Session* s = session();
    return s ? s->attachment->detach_due_ns() : std::nullopt;
}

bool Collector::cupti_attached() const
{
    const Session* s = session();
    return !s || s->attachment->attached();
}

int64_t Collector::now_ns()
{
    Session* s = running_session();
    if (!s)
        return -1;
    return static_cast<int64_t>(timestamp_now(*s) - s->start_cupti_ns);
}

bool Collector::post_rows(std::function<void(TraceDb&)> task)
{
    Session* s = running_session();
    if (!s)
        return false;
    job_wrote_rows_.store(true, std::memory_order_relaxed);
    return s->writer->post(std::move(task));
}

bool Collector::post_note(std::function<void(TraceDb&)> task)
{
    Session* s = running_session();
    if (!s)
        return false;
    return s->writer->post(std::move(task));
}

void Collector::watch_for_gpu_work()
{
    const Session* s = session();
    if (!s || !in_owner(*s) || s->whole_process_recorded || job_wrote_rows_.load()
        || context_seen_.load() == ContextSeen::Seen)
        return;
    // Armed: the domains are on wholesale, and the driver calls below would be the API exits that detach CUPTI, on
    // this thread. Draining only lasts inside the flusher's arm_detach_when_due. Only the flusher arms, and it is the
    // thread that looks, so the state cannot become Armed during the look.
    if (s->attachment->detaching())
        return;
    const std::optional<bool> active = platform_.cuda_context_active();
    if (!active)
        return;
    ContextSeen expected = ContextSeen::NotAsked;
    if (*active)
        context_seen_.store(ContextSeen::Seen);
    else
        context_seen_.compare_exchange_strong(expected, ContextSeen::None);
}

// A process that did no GPU work leaves no trace (idle_trace.hpp): called once the trace is finished, with the
// writer thread gone. True when the trace was removed.
bool Collector::remove_if_idle(const Session& s)
{
    if (env_flag("FP8SCOPE_KEEP_EMPTY_TRACES", false))
        return false;
    WorkEvidence evidence;
    evidence.whole_process_recorded = s.whole_process_recorded;
    evidence.activity_rows = activity_rows(s.decoder->counters());
    evidence.job_wrote_rows = job_wrote_rows_.load();
    const WriterCounters written = s.writer->counters();
    evidence.records_lost = written.dropped_records + written.rows_lost + s.decoder->counters().write_errors;
    const ContextSeen context = context_seen_.load();
    if (context != ContextSeen::NotAsked)
        evidence.context_seen = context == ContextSeen::Seen;
    if (!did_no_gpu_work(evidence) || !remove_trace_files(s.absolute_path))
        return false;
    append_line_to_manifest(removed_trace_manifest_line(s.absolute_path));
    inform(
        "no GPU work in this process: its trace '" + s.path + "' was removed (FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it)");
    return true;
}

// A recording by steps whose window never opened says why at the end (docs/collector.md "Capture windows"). Under
// `fp8scope record` its summary says it, judged from the trace, so the collector speaks only without one: plain
// LD_PRELOAD, or -q.
void Collector::warn_if_no_window_opened(const Session& s)
{
    const std::optional<std::string> why = capture_.never_opened();
    if (!why)
        return;
    const char* manifest = std::getenv("FP8SCOPE_MANIFEST");
    if (manifest && *manifest && !env_flag("FP8SCOPE_QUIET", false))
        return;
    warn(*why + " (trace '" + s.path + "')");
}

void Collector::stop(std::string_view reason)
{
    Session* s = session();
    if (!s || !in_owner(*s))
        return;
    std::lock_guard lock(stop_mutex_);
    State expected = State::Running;
    if (!state_.compare_exchange_strong(expected, State::Stopping))
        return;
    const uint64_t stop_at = timestamp_now(*s);
    capture_.finish(static_cast<int64_t>(stop_at - s->start_cupti_ns));
    if (s->capture_plan.mode != CaptureMode::Full) {
        const int64_t ranges = steps_.nvtx_ranges_seen(); // meta nvtx_step_ranges: CUPTI records none outside windows
        s->writer->post([ranges](TraceDb& db) { [[maybe_unused]] auto written = db.set_nvtx_step_ranges(ranges); });
    }
    s->attachment->flush_at_stop();
    flush_api_records(*s);
    s->writer->post([this, s](TraceDb& db) {
        platform_.harvest_tensor_stats(db, true);
        s->decoder->finish(db);
        write_dropped(*s, db, static_cast<int64_t>(timestamp_now(*s) - s->start_cupti_ns));
    });
    watch_for_gpu_work(); // the last look, from the thread that ends the process (its current context too)
    const uint64_t now = timestamp_now(*s);
    auto finished
        = s->writer->finish(FinishInfo { std::string(reason), static_cast<int64_t>(now - s->start_cupti_ns) });
    // Both keyed like the write errors: a full disk that lost rows already has its one warning line.
    if (!exists(s->absolute_path))
        // Its folder (or the file) was removed while recording: SQLite wrote on into the unlinked file.
        warn_once("trace-write", "the trace '" + s->path + "' was removed while recording (nothing of it is kept)");
    else if (!finished)
        warn_once("trace-write",
            "cannot finish trace '" + s->path + "': " + finished.error().message
                + " (the file holds everything up to its last commit)");
    else if (!remove_if_idle(*s))
        warn_if_no_window_opened(*s);
    state_.store(State::Stopped);
}

void Collector::abandon_after_fork()
{
    // The child has no writer thread and no CUPTI worker; the parent's session is not its own.
    if (state_.load() != State::Idle)
        state_.store(State::Disabled);
}

} // namespace fp8scope::collector
