#include "session/session_callbacks.hpp"

#include "calls/api_calls.hpp"
#include "calls/api_filter.hpp"
#include "calls/sync_calls.hpp"
#include "session/collector.hpp"
#include "session/manifest.hpp"
#include "session/process_info.hpp"
#include "session/session.hpp"
#include "session/warn.hpp"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>

namespace fp8scope::collector {
namespace {

// ---- CUPTI callbacks. They run on CUPTI's threads or inside application CUDA calls: hand off, never block.

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records)
{
    *max_records = 0;
    const Collector* c = Collector::get();
    Session* s = c ? c->session() : nullptr;
    uint8_t* got = s ? s->pool->acquire() : nullptr;
    *buffer = got;
    *size = got ? s->pool->buffer_bytes() : 0;
}

int64_t count_records(const Session& s, uint8_t* buffer, size_t valid_bytes)
{
    int64_t n = 0;
    CUpti_Activity* record = nullptr;
    while (s.cupti->activityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        ++n;
    return n;
}

void drain(Collector& c, Session& s, uint8_t* buffer, size_t valid_bytes, TraceDb& db)
{
    CUpti_Activity* record = nullptr;
    while (s.cupti->activityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        s.decoder->decode(*record, db);
    s.pool->release(buffer);
    write_dropped(s, db, static_cast<int64_t>(c.timestamp_now(s) - s.start_cupti_ns));
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes)
{
    Collector* c = Collector::get();
    Session* s = c ? c->session() : nullptr;
    if (!s || !buffer || process_id() != s->owner_pid)
        return; // a forked child never touches the parent's writer
    size_t dropped = 0;
    if (s->cupti->activityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0)
        s->dropped_by_cupti.fetch_add(static_cast<int64_t>(dropped));
    if (valid_bytes == 0 || s->discard_records) {
        s->pool->release(buffer);
        return;
    }
    if (!s->attachment->attached()) {
        // Handed over while CUPTI is being detached: it cannot be decoded on the writer thread once CUPTI is gone,
        // so it is counted here, while CUPTI still is, and never silently lost.
        s->dropped_at_detach.fetch_add(count_records(*s, buffer, valid_bytes));
        s->pool->release(buffer);
        return;
    }
    const bool posted
        = s->writer->post([c, s, buffer, valid_bytes](TraceDb& db) { drain(*c, *s, buffer, valid_bytes, db); });
    if (!posted) {
        s->dropped_by_queue.fetch_add(count_records(*s, buffer, valid_bytes));
        s->pool->release(buffer);
    }
}

// Per thread: how many synchronize calls are open, in which attachment of CUPTI (a call open when CUPTI was
// detached never sees its exit). A runtime synchronize calls the driver's, and only the outermost gives a row.
struct SyncNesting {
    uint64_t generation = 0;
    int depth = 0;
};
thread_local SyncNesting t_sync_nesting;

// A host-blocking synchronize call's entry or exit (sync_calls.hpp): its row is posted at the exit, inside a
// capture window only. The entry's timestamp travels to the exit in the callback's correlationData.
void on_sync_call(Collector& c, const SyncCallback& call, const CUpti_CallbackData& info)
{
    Session* s = c.session();
    if (!s || c.state() != State::Running || process_id() != s->owner_pid || !info.correlationData)
        return;
    SyncNesting& nesting = t_sync_nesting;
    if (const uint64_t generation = s->attachment->generation(); nesting.generation != generation)
        nesting = { generation, 0 };
    if (info.callbackSite == CUPTI_API_ENTER) {
        *info.correlationData = nesting.depth++ == 0 ? c.timestamp_now(*s) : 0;
        return;
    }
    nesting.depth = std::max(0, nesting.depth - 1);
    const uint64_t start = *info.correlationData;
    if (start == 0 || !c.capture().recording())
        return;
    const uint64_t end = c.timestamp_now(*s);
    std::optional<uint32_t> stream_id;
    if (call.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE && s->cupti->getStreamIdEx) {
        uint32_t id = 0;
        if (s->cupti->getStreamIdEx(info.context, synced_stream(call, info), call.per_thread_stream ? 1 : 0, &id)
            == CUPTI_SUCCESS)
            stream_id = id;
    }
    const CUpti_ActivitySynchronization2 record = sync_record(call, info, start, end, stream_id);
    if (!s->writer->post([s, record](TraceDb& db) { s->decoder->decode_sync(record, db); }))
        s->dropped_by_queue.fetch_add(1);
}

// A traced API call's entry or exit, when API records come from callbacks (api_calls.hpp).
void on_api_call(
    Collector& c, Session& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info)
{
    if (!s.cupti_settings.api_from_callbacks)
        return;
    const auto& traced
        = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? s.cupti_settings.runtime_traced : s.cupti_settings.driver_traced;
    if (cbid >= traced.size() || !traced[cbid] || c.state() != State::Running || process_id() != s.owner_pid)
        return;
    const uint64_t generation = s.attachment->generation();
    if (info.callbackSite == CUPTI_API_ENTER)
        api_call_enter(domain, cbid, c.timestamp_now(s), generation, c.capture().recording());
    else
        api_call_exit(domain, cbid, info, c.timestamp_now(s), generation, c.capture().recording(),
            static_cast<uint32_t>(s.owner_pid));
}

// The entry of the first driver call that makes a context: the kernels' timing is chosen (kernel_timestamps.hpp).
void choose_kernel_timestamps(Session& s)
{
    const std::optional<KernelTimestamps> chosen = s.timestamps->at_context_creation(s.cupti_settings.driver_traced);
    if (!chosen)
        return;
    if (chosen->hardware) {
        // The hardware event trace records no latency timestamps, and cannot be turned off: CUPTI stays attached.
        if (s.cupti_settings.latency_timestamps) {
            warn("FP8SCOPE_LATENCY_TIMESTAMPS=1 ignored: CUPTI's hardware event trace records no latency timestamps");
            s.cupti->activityEnableLatencyTimestamps(0);
        }
        s.attachment->keep_attached();
    }
    const std::string meta = chosen->meta;
    if (!s.writer->post([meta](TraceDb& db) { [[maybe_unused]] auto written = db.set_kernel_timestamps(meta); }))
        warn_once("kernel-timestamps", "the trace's meta kernel_timestamps could not be updated to '" + meta + "'");
}

// `userdata` is the collector (session_cupti_callbacks): the job's hot path reaches the session through it, with no
// global read.
void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data)
{
    auto* c = static_cast<Collector*>(userdata);
    Session* s = c ? c->session() : nullptr;
    if (!s)
        return; // subscribed, the session not made yet
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API, driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (driver && info->callbackSite == CUPTI_API_ENTER && makes_context(cbid) && s->timestamps
        && s->timestamps->waiting())
        choose_kernel_timestamps(*s);
    if (runtime || driver) {
        if (const SyncCallback* call = find_sync_callback(domain, cbid))
            on_sync_call(*c, *call, *info);
        on_api_call(*c, *s, domain, cbid, *info);
    }
    // A graph call rules out detaching; while a detach is armed, this call's exit detaches (cupti_attachment.hpp).
    if (s->attachment->on_api_callback(domain, cbid, info->callbackSite))
        return;
    // --capture-range cudaProfilerApi, as CUPTI's cupti_trace_injection sample does it: a window opens at the exit
    // of cuProfilerStart and closes at the entry of cuProfilerStop (cudaProfilerStart/Stop call them; both are
    // enabled, and a second start or stop in a row changes nothing).
    if ((runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)
        || (driver && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
        if (info->callbackSite == CUPTI_API_EXIT)
            c->capture().on_profiler(true);
        return;
    }
    if ((runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)
        || (driver && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
        if (info->callbackSite == CUPTI_API_ENTER)
            c->capture().on_profiler(false);
        return;
    }
    if (!runtime || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
        return;
    // The context is about to go, with its pending records: flush them while it is still there.
    if (info->callbackSite == CUPTI_API_ENTER)
        c->flush();
}

// ---- set-up

// Enables the traced API calls and keeps their callback ids, which capture windows switch off and on again.
void enable_api_filter(Session& s)
{
    CuptiSettings& settings = s.cupti_settings;
    const char* name = nullptr;
    for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid)
        if (s.cupti->getCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name
            && is_traced_runtime_api(name))
            settings.runtime_cbids.push_back(cbid);
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid)
        if (s.cupti->getCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name
            && is_traced_driver_api(name))
            settings.driver_cbids.push_back(cbid);
    if (settings.api_from_callbacks) {
        settings.runtime_traced.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, 0);
        settings.driver_traced.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
        for (uint32_t cbid : settings.runtime_cbids)
            settings.runtime_traced[cbid] = 1;
        for (uint32_t cbid : settings.driver_cbids)
            settings.driver_traced[cbid] = 1;
        enable_api_callbacks(*s.cupti, settings, s.attachment->subscriber());
        return;
    }
    for (uint32_t cbid : settings.runtime_cbids)
        s.cupti->activityEnableRuntimeApi(cbid, 1);
    for (uint32_t cbid : settings.driver_cbids)
        s.cupti->activityEnableDriverApi(cbid, 1);
}

} // namespace

CuptiCallbacks session_cupti_callbacks(Collector& collector)
{
    return { on_callback, &collector, buffer_requested, buffer_completed };
}

bool subscribe(Session& s)
{
    // Diagnostic for overhead measurements: FP8SCOPE_SUBSCRIBE=0 traces without a callback subscriber (then
    // nothing detects another tool holding CUPTI, and cudaDeviceReset does not flush).
    if (!env_flag("FP8SCOPE_SUBSCRIBE", true))
        return true;
    std::string why_not;
    if (s.attachment->subscribe(why_not))
        return true;
    not_traced(why_not);
    return false;
}

void write_dropped(Session& s, TraceDb& db, int64_t now_ns)
{
    auto add = [&](schema::DropSource source, int64_t count) {
        if (count > 0) [[maybe_unused]]
            auto ignored = db.add_dropped(DroppedRow { now_ns, source, count, std::nullopt });
    };
    add(schema::DropSource::CuptiNoBuffer, s.dropped_by_cupti.exchange(0));
    add(schema::DropSource::WriterQueueFull, s.dropped_by_queue.exchange(0));
    add(schema::DropSource::CaptureDetach, s.dropped_at_detach.exchange(0));
    const int64_t exhausted = s.pool->exhausted();
    add(schema::DropSource::BufferPoolExhausted, exhausted - s.pool_exhausted_written);
    s.pool_exhausted_written = exhausted;
}

bool enable_activities(Session& s)
{
    CuptiSettings& settings = s.cupti_settings;
    apply_cupti_settings(*s.cupti, settings, s.attachment->subscriber());
    const CUptiResult kernels = s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (kernels != CUPTI_SUCCESS) {
        not_traced(std::string("cannot enable CUPTI kernel tracing: ") + s.cupti->result_name(kernels));
        return false;
    }
    settings.window_kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const bool nvtx = env_flag("FP8SCOPE_NVTX", true);
    // Diagnostics for overhead measurements (docs/benchmarks.md): FP8SCOPE_ACTIVITIES=kernels records
    // kernels only, FP8SCOPE_API=none records no API calls.
    if (env_text("FP8SCOPE_ACTIVITIES", "all") == "kernels")
        return true;
    for (CUpti_ActivityKind kind : { CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
             CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
             CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_MARKER,
             CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION /* marks the collector's own calls (own_work.hpp) */ }) {
        if ((kind == CUPTI_ACTIVITY_KIND_MARKER && !nvtx)
            || (kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && settings.sync_from_callbacks))
            continue;
        // Diagnostic: FP8SCOPE_SKIP_KINDS=5,38 leaves those CUpti_ActivityKind numbers out.
        std::string skip(1, ','); // built piecewise: GCC 12 warns falsely (-Wrestrict) on "," + string
        skip += env_text("FP8SCOPE_SKIP_KINDS", "");
        skip += ',';
        std::string key(1, ',');
        key += std::to_string(static_cast<int>(kind));
        key += ',';
        if (skip.find(key) != std::string::npos)
            continue;
        const CUptiResult result = s.cupti->activityEnable(kind);
        if (result != CUPTI_SUCCESS)
            warn("cannot enable CUPTI activity kind " + std::to_string(static_cast<int>(kind)) + ": "
                + s.cupti->result_name(result) + " (those records are missing from the trace)");
        else if (kind != CUPTI_ACTIVITY_KIND_DEVICE && kind != CUPTI_ACTIVITY_KIND_CONTEXT)
            settings.window_kinds.push_back(kind);
        else
            settings.start_only_kinds.push_back(kind);
    }
    const std::string api = env_text("FP8SCOPE_API", "filtered");
    if (api == "all") { // diagnostic: every runtime and driver call, as whole activity kinds
        s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        s.cupti->activityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
        settings.api_all_kinds = true;
    } else if (api != "none") {
        enable_api_filter(s);
    }
    return true;
}

} // namespace fp8scope::collector
