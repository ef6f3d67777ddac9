#include "session/session.hpp"

#include "calls/api_calls.hpp"
#include "calls/idle_trace.hpp"
#include "calls/nvtx_paths.hpp"
#include "capture/capture.hpp"
#include "cupti/cuda_context.hpp"
#include "cupti/cupti_callbacks.hpp"
#include "session/lifecycle.hpp"
#include "session/manifest.hpp"
#include "session/output_path.hpp"
#include "session/process_info.hpp"
#include "session/session_internal.hpp"
#include "session/warn.hpp"
#include "stats/stats_engine.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string>

namespace fp8scope::collector {

Session* g_session = nullptr;
std::atomic<State> g_state { State::Idle };

namespace {

std::mutex g_start_mutex;
std::mutex g_stop_mutex;
// Signs of GPU work besides the decoded rows (idle_trace.hpp): the job wrote rows through the collector (markers,
// scalars, statistics), and what the looks for a CUDA context found (windowed recordings only).
std::atomic<bool> g_job_wrote_rows { false };
enum class ContextSeen : uint8_t { NotAsked, None, Seen };
std::atomic<ContextSeen> g_context_seen { ContextSeen::NotAsked };

bool exists(const std::string& path)
{
    struct stat st { };
    return ::lstat(path.c_str(), &st) == 0;
}

// The one warning line of a trace that cannot be written (disk full, I/O error, folder gone), whichever part of
// the collector meets it first: the rows lost are counted and recorded in FP8SCOPE_DROPPED at the end.
void warn_trace_write(const std::string& message)
{
    warn_once("trace-write",
        "cannot write the trace: " + message
            + " (records that cannot be written are lost; "
              "their count goes into FP8SCOPE_DROPPED as WRITER_ERROR)");
}

// Creates the trace under the first free name the pattern gives (output_path.hpp, create_trace_file).
Expected<std::unique_ptr<TraceDb>> create_trace(const SessionInfo& info, std::string& path)
{
    const char* pattern = std::getenv("FP8SCOPE_OUTPUT");
    const std::string_view chosen = pattern && *pattern ? std::string_view(pattern) : kDefaultOutputPattern;
    const OutputNameInputs inputs { info.host, info.pid, rank_from_environment(), local_rank_from_environment() };
    TraceDbOptions options;
    options.on_write_error = [](const Error& error) { warn_trace_write(error.message); };
    return create_trace_file(chosen, inputs, info, path, options);
}

// What detaching CUPTI between capture windows (cupti_attachment.hpp) needs from the session.
class SessionAttachmentHost final : public AttachmentHost {
public:
    explicit SessionAttachmentHost(Session& s)
        : s_(s)
    {
    }
    int64_t now_ns() override { return static_cast<int64_t>(timestamp_now(s_) - s_.start_cupti_ns); }
    bool window_open() override { return capture_recording(); }
    void flush_api_records() override { collector::flush_api_records(s_); }
    bool wait_for_writer() override
    {
        auto drained = std::make_shared<std::promise<void>>();
        std::future<void> done = drained->get_future();
        return s_.writer->post([drained](TraceDb&) { drained->set_value(); })
            && done.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
    }
    bool start_correlation_generation() override
    {
        Session& s = s_;
        return s.writer->post([&s](TraceDb&) { s.decoder->start_correlation_generation(); });
    }
    void set_nvtx_forwarding(bool on) override { collector::set_nvtx_forwarding(on); }
    bool in_owner_process() override { return getpid() == s_.owner_pid; }
    void inform(std::string_view text) override { collector::inform(text); }
    void warn_once(std::string_view key, std::string_view text) override { collector::warn_once(key, text); }

private:
    Session& s_;
};

// Whether CUPTI may be detached between this run's capture windows (docs/collector.md, "Capture windows").
bool detach_possible(const Session& s)
{
    const CaptureMode mode = s.capture_plan.mode;
    if (mode == CaptureMode::Full || mode == CaptureMode::ProfilerApi || s.capture_plan.stats_outside_windows)
        return false; // cudaProfilerStart is seen through CUPTI; statistics outside windows launch through it
    if (!env_flag("FP8SCOPE_CAPTURE_DETACH", true) || !s.attachment->subscriber() || !s.cupti->finalize
        || !s.cupti->enableDomain)
        return false;
    // While detached our timestamps come from CLOCK_REALTIME, which must be CUPTI's clock (its default on Linux).
    uint64_t cupti_ns = 0;
    if (s.cupti->getTimestamp(&cupti_ns) != CUPTI_SUCCESS)
        return false;
    const int64_t gap = realtime_ns() - static_cast<int64_t>(cupti_ns);
    return gap > -1'000'000 && gap < 1'000'000;
}

bool start_locked()
{
    auto session = std::make_unique<Session>();
    Session& s = *session;
    std::string error;
    s.cupti = load_cupti(error);
    if (!s.cupti) {
        not_traced(error);
        return false;
    }
    s.attachment_host = std::make_unique<SessionAttachmentHost>(s);
    s.attachment
        = std::make_unique<CuptiAttachment>(*s.cupti, s.cupti_settings, session_cupti_callbacks(), *s.attachment_host);
    if (!subscribe(s))
        return false;

    s.owner_pid = getpid();
    s.cupti->getTimestamp(&s.start_cupti_ns);
    SessionInfo info;
    // CUPTI's clock is CLOCK_REALTIME by default (shared/reference/nsys_cupti.md §4.4): the session start in
    // CUPTI time is also its UTC epoch time.
    info.utc_epoch_ns = static_cast<int64_t>(s.start_cupti_ns);
    info.producer = "fp8scope " FP8SCOPE_VERSION " (collector)";
    info.command_line = command_line();
    info.host = host_name();
    info.pid = s.owner_pid;
    info.rank = rank_from_environment().value_or(-1);
    info.world_size = world_size_from_environment().value_or(-1);
    uint32_t cupti_version = 0;
    if (s.cupti->getVersion(&cupti_version) == CUPTI_SUCCESS)
        info.cupti_version = static_cast<int32_t>(cupti_version);
    info.cuda_driver_version = loaded_library_version("libcuda.so", "cuDriverGetVersion");
    info.cuda_runtime_version = loaded_library_version("libcudart.so", "cudaRuntimeGetVersion");
    s.capture_plan = capture_plan_from_environment();
    CuptiSettings& settings = s.cupti_settings;
    const CUpti_SubscriberHandle subscriber = s.attachment->subscriber();
    settings.detach_between_windows = detach_possible(s);
    s.discard_records = env_flag("FP8SCOPE_DISCARD_RECORDS", false);
    settings.sync_from_callbacks = subscriber && env_text("FP8SCOPE_SYNC_RECORDS", "callbacks") != "activity";
    settings.api_from_callbacks = subscriber && env_text("FP8SCOPE_API_SOURCE", "callbacks") != "activity";
    settings.system_thread_ids = env_text("FP8SCOPE_THREAD_IDS", "system") == "system";
    settings.latency_timestamps = env_flag("FP8SCOPE_LATENCY_TIMESTAMPS", false);
    settings.reset_callback = env_flag("FP8SCOPE_RESET_CALLBACK", true);
    // The diagnostics that leave records out (FP8SCOPE_ACTIVITIES, FP8SCOPE_API, FP8SCOPE_SKIP_KINDS,
    // FP8SCOPE_DISCARD_RECORDS) make the rows no proof of idleness, as windows do.
    s.whole_process_recorded = s.capture_plan.mode == CaptureMode::Full && !s.discard_records
        && env_text("FP8SCOPE_ACTIVITIES", "all") != "kernels" && env_text("FP8SCOPE_API", "filtered") != "none"
        && env_text("FP8SCOPE_SKIP_KINDS", "").empty();
    info.capture_mode = std::string(s.capture_plan.mode_name());
    info.capture_options = s.capture_plan.options;

    auto db = create_trace(info, s.path);
    if (!db) {
        not_traced("cannot create trace '" + s.path + "': " + db.error().message);
        s.cupti->unsubscribe(subscriber);
        return false;
    }
    auto writer = BackgroundWriter::start(std::move(*db));
    if (!writer) {
        not_traced("cannot start the trace writer: " + writer.error().message);
        s.cupti->unsubscribe(subscriber);
        return false;
    }
    s.writer = std::move(*writer);
    s.absolute_path = absolute(s.path);
    const CuptiApi* cupti = s.cupti;
    s.decoder = std::make_unique<RecordDecoder>(
        s.start_cupti_ns, s.owner_pid,
        [cupti](CUpti_ActivityKind kind, uint32_t cbid) {
            const char* name = nullptr;
            const auto domain
                = kind == CUPTI_ACTIVITY_KIND_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
            if (cupti->getCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
                return std::string();
            return std::string(name);
        },
        [](const std::string& line) { warn_once("trace-write", line); });
    s.decoder->set_api_from_callbacks(settings.api_from_callbacks);
    if (settings.api_from_callbacks) {
        Session* session_ptr = &s;
        set_api_call_sink([session_ptr](ApiCallBatch&& calls) {
            auto batch = std::make_shared<ApiCallBatch>(std::move(calls));
            const bool posted = session_ptr->writer->post([session_ptr, batch](TraceDb& trace) {
                for (const ApiCall& call : *batch)
                    session_ptr->decoder->decode_api_call(call, trace);
            });
            if (!posted)
                session_ptr->dropped_by_queue.fetch_add(1);
            return posted;
        });
    }
    const size_t buffer_mb = env_size("FP8SCOPE_BUFFER_MB", 4, 1, 256);
    const size_t max_buffers = env_size("FP8SCOPE_MAX_BUFFERS", 64, 2, BufferPool::kMaxBuffers);
    s.pool = std::make_unique<BufferPool>(buffer_mb << 20, std::min<size_t>(8, max_buffers), max_buffers);

    s.services = { s.cupti, s.start_cupti_ns };
    g_session = session.release();
    const CuptiCallbacks callbacks = session_cupti_callbacks();
    const CUptiResult registered
        = s.cupti->activityRegisterCallbacks(callbacks.buffer_requested, callbacks.buffer_completed);
    if (registered != CUPTI_SUCCESS || !enable_activities(s)) {
        if (registered != CUPTI_SUCCESS)
            not_traced(std::string("cannot register CUPTI buffers: ") + s.cupti->result_name(registered));
        s.cupti->unsubscribe(subscriber);
        [[maybe_unused]] auto finished = s.writer->finish(FinishInfo { "CUPTI set-up failed", 0 });
        return false;
    }
    if (s.capture_plan.mode == CaptureMode::ProfilerApi) {
        // Only these four callbacks: every other API call stays free of them.
        const bool enabled = subscriber
            && s.cupti->enableCallback(
                   1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)
                == CUPTI_SUCCESS
            && s.cupti->enableCallback(
                   1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)
                == CUPTI_SUCCESS
            && s.cupti->enableCallback(
                   1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)
                == CUPTI_SUCCESS
            && s.cupti->enableCallback(
                   1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
                == CUPTI_SUCCESS;
        if (!enabled)
            warn("cannot follow cudaProfilerStart/Stop (no CUPTI callbacks): --capture-range cudaProfilerApi "
                 "captures nothing");
    }
    append_to_manifest(s.path);
    inform("recording to " + s.path);
    return true;
}

} // namespace

uint64_t timestamp_now(const Session& s)
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

bool start_session()
{
    std::lock_guard lock(g_start_mutex);
    if (g_state.load() != State::Idle)
        return g_state.load() == State::Running;
    g_state.store(State::Disabled);
    if (!start_locked())
        return false;
    g_state.store(State::Running);
    install_lifecycle_hooks();
    Session& s = *g_session;
    const uint64_t now = timestamp_now(s);
    capture_begin(s.capture_plan, static_cast<int64_t>(now - s.start_cupti_ns));
    return true;
}

void flush_session()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    flush_api_records(*s);
    s->attachment->flush_if_attached(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    s->writer->post([](TraceDb& db) { [[maybe_unused]] auto committed = db.commit(); });
}

void flush_session_periodic()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    // Flag 0: only records that are complete, without waiting for the device (cupti_activity.h). Nothing when
    // detached between capture windows: nothing to flush, and no CUPTI call may be made.
    if (!s->attachment->flush_if_attached(0))
        return;
    flush_api_records(*s);
    s->writer->post([](TraceDb& db) { harvest_tensor_stats(db, false); });
    s->attachment->arm_detach_when_due();
}

void set_window_activities(bool on, std::atomic<bool>& recording)
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid) {
        recording.store(on);
        return;
    }
    if (on)
        s->attachment->open_window(recording);
    else
        s->attachment->close_window(recording);
}

void flush_completed_records()
{
    Session* s = g_session;
    if (!s || g_state.load() != State::Running || getpid() != s->owner_pid)
        return;
    s->attachment->flush_if_attached(0); // flag 0: completed records only, never waiting for the device
}

void detach_soon()
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid)
        return;
    if (s->attachment->detach_soon(session_now_ns()))
        wake_flusher();
}

std::optional<int64_t> detach_due_ns()
{
    const Session* s = g_session;
    return s ? s->attachment->detach_due_ns() : std::nullopt;
}

bool cupti_attached()
{
    const Session* s = g_session;
    return !s || s->attachment->attached();
}

int64_t session_now_ns()
{
    const Session* s = g_session;
    if (!running_session_services())
        return -1;
    return static_cast<int64_t>(timestamp_now(*s) - s->start_cupti_ns);
}

bool post_capture_window(const CaptureWindowRow& row)
{
    Session* s = g_session;
    const State state = g_state.load();
    if (!s || getpid() != s->owner_pid || (state != State::Running && state != State::Stopping))
        return false;
    return s->writer->post([row](TraceDb& db) { [[maybe_unused]] auto written = db.set_capture_window(row); });
}

const SessionServices* running_session_services()
{
    Session* s = g_session;
    if (!s || g_state.load(std::memory_order_acquire) != State::Running || getpid() != s->owner_pid)
        return nullptr;
    return &s->services;
}

bool post_to_writer(std::function<void(TraceDb&)> task)
{
    Session* s = g_session;
    if (!running_session_services())
        return false;
    g_job_wrote_rows.store(true, std::memory_order_relaxed);
    return s->writer->post(std::move(task));
}

bool post_note_to_writer(std::function<void(TraceDb&)> task)
{
    Session* s = g_session;
    if (!running_session_services())
        return false;
    return s->writer->post(std::move(task));
}

void watch_for_gpu_work()
{
    const Session* s = g_session;
    if (!s || getpid() != s->owner_pid || s->whole_process_recorded || g_job_wrote_rows.load()
        || g_context_seen.load() == ContextSeen::Seen)
        return;
    // Armed: the domains are on wholesale, and the driver calls below would be the API exits that detach CUPTI, on
    // this thread. Draining only lasts inside the flusher's arm_detach_when_due. Only the flusher arms, and it is the
    // thread that looks, so the state cannot become Armed during the look.
    if (s->attachment->detaching())
        return;
    const std::optional<bool> active = cuda_context_active();
    if (!active)
        return;
    ContextSeen expected = ContextSeen::NotAsked;
    if (*active)
        g_context_seen.store(ContextSeen::Seen);
    else
        g_context_seen.compare_exchange_strong(expected, ContextSeen::None);
}

namespace {

// A process that did no GPU work leaves no trace (idle_trace.hpp): called once the trace is finished, with the
// writer thread gone. True when the trace was removed.
bool remove_if_idle(const Session& s)
{
    if (env_flag("FP8SCOPE_KEEP_EMPTY_TRACES", false))
        return false;
    WorkEvidence evidence;
    evidence.whole_process_recorded = s.whole_process_recorded;
    evidence.activity_rows = activity_rows(s.decoder->counters());
    evidence.job_wrote_rows = g_job_wrote_rows.load();
    const WriterCounters written = s.writer->counters();
    evidence.records_lost = written.dropped_records + written.rows_lost + s.decoder->counters().write_errors;
    const ContextSeen context = g_context_seen.load();
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
void warn_if_no_window_opened(const Session& s)
{
    const std::optional<std::string> why = capture_never_opened();
    if (!why)
        return;
    const char* manifest = std::getenv("FP8SCOPE_MANIFEST");
    if (manifest && *manifest && !env_flag("FP8SCOPE_QUIET", false))
        return;
    warn(*why + " (trace '" + s.path + "')");
}

} // namespace

void stop_session(std::string_view reason)
{
    Session* s = g_session;
    if (!s || getpid() != s->owner_pid)
        return;
    std::lock_guard lock(g_stop_mutex);
    State expected = State::Running;
    if (!g_state.compare_exchange_strong(expected, State::Stopping))
        return;
    const uint64_t stop_at = timestamp_now(*s);
    capture_finish(static_cast<int64_t>(stop_at - s->start_cupti_ns));
    if (s->capture_plan.mode != CaptureMode::Full) {
        const int64_t ranges = nvtx_steps_seen(); // meta nvtx_step_ranges: CUPTI records none outside windows
        s->writer->post([ranges](TraceDb& db) { [[maybe_unused]] auto written = db.set_nvtx_step_ranges(ranges); });
    }
    s->attachment->flush_at_stop();
    flush_api_records(*s);
    s->writer->post([s](TraceDb& db) {
        harvest_tensor_stats(db, true);
        s->decoder->finish(db);
        write_dropped(*s, db);
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
    g_state.store(State::Stopped);
}

void abandon_session_after_fork()
{
    // The child has no writer thread and no CUPTI worker; the parent's session is not its own.
    if (g_state.load() != State::Idle)
        g_state.store(State::Disabled);
}

State session_state()
{
    return g_state.load();
}

} // namespace fp8scope::collector
