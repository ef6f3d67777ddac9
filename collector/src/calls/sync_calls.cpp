#include "calls/sync_calls.hpp"

#include <array>

namespace fp8scope::collector {

namespace {

constexpr auto kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr auto kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr auto kStream = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
constexpr auto kContext = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
constexpr auto kEvent = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;

constexpr auto kWait = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;

constexpr std::array<SyncCallback, 14> kCalls { {
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, kStream, false },
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, kStream, true },
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, kContext, false },
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020, kContext, false },
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, kEvent, false },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, kStream, false },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, kStream, true },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, kContext, false },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, kContext, false },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, kEvent, false },
    // Not host-blocking, but the SYNCHRONIZATION kind records them and the trace keeps them (a stream's wait on
    // another's event is part of its dependencies).
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, kWait, false },
    { kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000, kWait, true },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, kWait, false },
    { kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz, kWait, true },
} };

} // namespace

std::span<const SyncCallback> sync_callbacks()
{
    return kCalls;
}

const SyncCallback* find_sync_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    for (const SyncCallback& call : sync_callbacks())
        if (call.domain == domain && call.cbid == cbid)
            return &call;
    return nullptr;
}

CUstream synced_stream(const SyncCallback& call, const CUpti_CallbackData& data)
{
    if ((call.type != kStream && call.type != kWait) || !data.functionParams)
        return nullptr;
    // Every such parameter struct (generated_cuda_runtime_api_meta.h, generated_cuda_meta.h) starts with the stream.
    return *static_cast<const CUstream*>(data.functionParams);
}

CUpti_ActivitySynchronization2 sync_record(const SyncCallback& call, const CUpti_CallbackData& data, uint64_t start_ns,
    uint64_t end_ns, std::optional<uint32_t> stream_id)
{
    CUpti_ActivitySynchronization2 record {};
    record.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    record.type = call.type;
    record.start = start_ns;
    record.end = end_ns;
    record.correlationId = data.correlationId; // the same id as the call's API record (cupti_callbacks.h)
    record.contextId = data.contextUid; // the same id as the activity records' contextId
    record.streamId = stream_id.value_or(CUPTI_SYNCHRONIZATION_INVALID_VALUE);
    record.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    record.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    return record;
}

} // namespace fp8scope::collector
