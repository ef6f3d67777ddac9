#include "cupti/cupti_settings.hpp"

#include <algorithm>
#include <iterator>

namespace fp8scope::collector {
namespace {

constexpr CUpti_CallbackId kGraphCalls[] = { CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphUpload, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz };

} // namespace

bool is_graph_call(CUpti_CallbackId cbid)
{
    return std::ranges::find(kGraphCalls, cbid) != std::end(kGraphCalls);
}

void enable_api_callbacks(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber)
{
    if (!subscriber || !settings.api_from_callbacks)
        return;
    for (uint32_t cbid : settings.runtime_cbids)
        cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
    for (uint32_t cbid : settings.driver_cbids)
        cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

void enable_session_callbacks(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber)
{
    if (!subscriber)
        return;
    // cudaDeviceReset takes the context's pending records with it: its callback flushes them first.
    if (settings.reset_callback)
        cupti.enableCallback(
            1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    if (settings.sync_from_callbacks)
        for (const CuptiSettings::Callback& call : settings.sync_callbacks)
            cupti.enableCallback(1, subscriber, call.domain, call.cbid);
    // A CUDA graph rules out detaching (CuptiAttachment::note_graph_call): watched whenever CUPTI may be detached.
    if (settings.detach_between_windows)
        for (CUpti_CallbackId cbid : kGraphCalls)
            cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    enable_api_callbacks(cupti, settings, subscriber);
}

void apply_cupti_settings(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber)
{
    // OS thread ids (gettid), as nsys stores them, instead of CUPTI's default pthread_self()-derived ids.
    if (settings.system_thread_ids)
        cupti.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (settings.latency_timestamps)
        cupti.activityEnableLatencyTimestamps(1);
    // Query records (cudaStreamQuery/cudaEventQuery on unfinished work) are not host-blocking syncs.
    cupti.activityEnableAllSyncRecords(0);
    // Our buffers come zeroed (BufferPool), so CUPTI need not clear each on the application thread. A CUPTI that
    // refuses the attribute clears them itself: nothing is lost.
    if (settings.zeroed_buffers && cupti.activitySetAttribute) {
        uint8_t zeroed = 1;
        size_t size = sizeof zeroed;
        cupti.activitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
    }
    // Buffers reach the writer at least every 500 ms, so that a killed job loses at most about a second.
    cupti.activityFlushPeriod(500);
    enable_session_callbacks(cupti, settings, subscriber);
}

} // namespace fp8scope::collector
