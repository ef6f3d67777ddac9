// Collector::start(): the session made inside cuInit (InitializeInjection), and what it needs at its start: CUPTI, the
// capture plan, the trace file, the writer, the decoder, the activity kinds (docs/collector.md).
#include "calls/api_calls.hpp"
#include "calls/sync_calls.hpp"
#include "session/collector.hpp"
#include "session/manifest.hpp"
#include "session/output_path.hpp"
#include "session/process_info.hpp"
#include "session/session.hpp"
#include "session/session_callbacks.hpp"
#include "session/warn.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>

namespace fp8scope::collector {
namespace {

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

std::string env_value(const char* name)
{
    const char* value = std::getenv(name);
    return value ? value : "";
}

// The plan from FP8SCOPE_CAPTURE_PLAN or the FP8SCOPE_CAPTURE_* variables; a bad value gives one warning and a full
// capture.
CapturePlan capture_plan_from_environment()
{
    // `fp8scope record` passes the plan it parsed; a job run without it may set the variables by hand.
    const std::string passed = env_value(std::string(kCapturePlanVariable).c_str());
    CapturePlanResult result = passed.empty() ? parse_capture_plan(capture_request_from_variables(env_value))
                                              : deserialize_capture_plan(passed);
    if (!result.plan) {
        warn(std::string(passed.empty() ? "ignoring the FP8SCOPE_CAPTURE_* variables: " : "ignoring ") + result.error
            + " (recording the whole run)");
        return {};
    }
    return *result.plan;
}

// What detaching CUPTI between capture windows (cupti_attachment.hpp) needs from the session.
class SessionAttachmentHost final : public AttachmentHost {
public:
    SessionAttachmentHost(Collector& c, Session& s)
        : c_(c)
        , s_(s)
    {
    }
    int64_t now_ns() override { return static_cast<int64_t>(c_.timestamp_now(s_) - s_.start_cupti_ns); }
    bool window_open() override { return c_.capture().recording(); }
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
    void set_nvtx_forwarding(bool on) override { c_.nvtx().on.store(on, std::memory_order_relaxed); }
    bool in_owner_process() override { return process_id() == s_.owner_pid; }
    bool context_pending() override { return s_.timestamps && s_.timestamps->waiting(); }
    void inform(std::string_view text) override { collector::inform(text); }
    void warn_once(std::string_view key, std::string_view text) override { collector::warn_once(key, text); }

private:
    Collector& c_;
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

// Reads the FP8SCOPE_* settings of CUPTI and of the session (docs/collector.md, "Environment").
SessionInfo read_settings(Session& s)
{
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
    for (const SyncCallback& call : sync_callbacks())
        settings.sync_callbacks.push_back({ call.domain, call.cbid });
    settings.api_from_callbacks = subscriber && env_text("FP8SCOPE_API_SOURCE", "callbacks") != "activity";
    settings.system_thread_ids = env_text("FP8SCOPE_THREAD_IDS", "system") == "system";
    settings.latency_timestamps = env_flag("FP8SCOPE_LATENCY_TIMESTAMPS", false);
    // The session's BufferPool zero-fills every buffer it hands out; FP8SCOPE_ZEROED_BUFFERS=0 (diagnostic, for A/B
    // runs) lets CUPTI clear them again as it does by default.
    settings.zeroed_buffers = env_flag("FP8SCOPE_ZEROED_BUFFERS", true);
    settings.reset_callback = env_flag("FP8SCOPE_RESET_CALLBACK", true);
    // The hardware event trace is asked for at the first context's creation (kernel_timestamps.hpp); until then the
    // trace's meta says no context was made.
    s.timestamps = std::make_unique<KernelTimestampChoice>(*s.cupti, env_flag("FP8SCOPE_HW_TRACE", true), subscriber);
    info.kernel_timestamps = s.timestamps->meta_at_start();
    // The diagnostics that leave records out (FP8SCOPE_ACTIVITIES, FP8SCOPE_API, FP8SCOPE_SKIP_KINDS,
    // FP8SCOPE_DISCARD_RECORDS) make the rows no proof of idleness, as windows do.
    s.whole_process_recorded = s.capture_plan.mode == CaptureMode::Full && !s.discard_records
        && env_text("FP8SCOPE_ACTIVITIES", "all") != "kernels" && env_text("FP8SCOPE_API", "filtered") != "none"
        && env_text("FP8SCOPE_SKIP_KINDS", "").empty();
    info.capture_mode = std::string(s.capture_plan.mode_name());
    info.capture_options = s.capture_plan.options;
    return info;
}

// The decoder of the session's records (writer thread), and the sink of its API records from callbacks.
void make_decoder(Session& s)
{
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
    s.decoder->set_api_from_callbacks(s.cupti_settings.api_from_callbacks);
    if (!s.cupti_settings.api_from_callbacks)
        return;
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

// --capture-range cudaProfilerApi: only these four callbacks, so that every other API call stays free of them.
void follow_profiler_calls(const Session& s, CUpti_SubscriberHandle subscriber)
{
    const bool enabled = subscriber
        && s.cupti->enableCallback(
               1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)
            == CUPTI_SUCCESS
        && s.cupti->enableCallback(
               1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)
            == CUPTI_SUCCESS
        && s.cupti->enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)
            == CUPTI_SUCCESS
        && s.cupti->enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
            == CUPTI_SUCCESS;
    if (!enabled)
        warn("cannot follow cudaProfilerStart/Stop (no CUPTI callbacks): --capture-range cudaProfilerApi "
             "captures nothing");
}

} // namespace

bool Collector::start_locked()
{
    auto session = std::make_unique<Session>();
    Session& s = *session;
    std::string error;
    s.cupti = platform_.load_cupti(error);
    if (!s.cupti) {
        not_traced(error);
        return false;
    }
    s.attachment_host = std::make_unique<SessionAttachmentHost>(*this, s);
    s.attachment = std::make_unique<CuptiAttachment>(
        *s.cupti, s.cupti_settings, session_cupti_callbacks(*this), *s.attachment_host);
    if (!subscribe(s))
        return false;

    s.owner_pid = process_id();
    s.cupti->getTimestamp(&s.start_cupti_ns);
    const SessionInfo info = read_settings(s);
    const CUpti_SubscriberHandle subscriber = s.attachment->subscriber();
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
    make_decoder(s);
    const size_t buffer_mb = env_size("FP8SCOPE_BUFFER_MB", 4, 1, 256);
    const size_t max_buffers = env_size("FP8SCOPE_MAX_BUFFERS", 64, 2, BufferPool::kMaxBuffers);
    s.pool = std::make_unique<BufferPool>(buffer_mb << 20, std::min<size_t>(8, max_buffers), max_buffers);

    // Published before CUPTI's buffers are registered: the callbacks find the session from here on. Never freed while
    // the process runs (CUPTI may call back until it is gone).
    session_.store(session.release(), std::memory_order_release);
    const CuptiCallbacks callbacks = session_cupti_callbacks(*this);
    const CUptiResult registered
        = s.cupti->activityRegisterCallbacks(callbacks.buffer_requested, callbacks.buffer_completed);
    if (registered != CUPTI_SUCCESS || !enable_activities(s)) {
        if (registered != CUPTI_SUCCESS)
            not_traced(std::string("cannot register CUPTI buffers: ") + s.cupti->result_name(registered));
        s.cupti->unsubscribe(subscriber);
        [[maybe_unused]] auto finished = s.writer->finish(FinishInfo { "CUPTI set-up failed", 0 });
        return false;
    }
    if (s.capture_plan.mode == CaptureMode::ProfilerApi)
        follow_profiler_calls(s, subscriber);
    append_to_manifest(s.path);
    inform("recording to " + s.path);
    return true;
}

bool Collector::start()
{
    std::lock_guard lock(start_mutex_);
    if (state_.load() != State::Idle)
        return state_.load() == State::Running;
    state_.store(State::Disabled);
    if (!start_locked())
        return false;
    state_.store(State::Running);
    platform_.started(*this);
    Session& s = *session();
    const uint64_t now = timestamp_now(s);
    capture_.begin(s.capture_plan, static_cast<int64_t>(now - s.start_cupti_ns));
    return true;
}

} // namespace fp8scope::collector
