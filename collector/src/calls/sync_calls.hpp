// Host-blocking synchronization calls recorded from CUPTI callbacks on those calls alone, in place of CUPTI's
// SYNCHRONIZATION activity kind. Enabling that kind costs every launch about 0.75-1.2 µs on an H100
// (docs/benchmarks.md, "The collector's cost per launch, broken down"), while a callback on a call that blocks the host
// anyway costs nothing that matters. The rows are the ones that kind gives (stream, context and event synchronize, and
// cudaStreamWaitEvent, which does not block the host but is a dependency between streams), built as CUPTI records
// so that the decoder writes them as it writes any other (times, correlation ids, device from the context). What
// they lack: the event ids (no CUPTI call gives an event's id from its handle).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <optional>
#include <span>

namespace fp8scope::collector {

struct SyncCallback {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_ActivitySynchronizationType type;
    bool per_thread_stream; // a _ptsz variant: its NULL stream is the per-thread default stream
};

// Every runtime and driver call recorded this way.
std::span<const SyncCallback> sync_callbacks();
// The entry for a callback, or null when it is not one of them.
const SyncCallback* find_sync_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// The stream a stream synchronize waits for, or the stream that waits on an event: the call's first parameter
// (`stream` or `hStream`, also in the _ptsz variants). Null for other calls.
CUstream synced_stream(const SyncCallback& call, const CUpti_CallbackData& data);

// The record the SYNCHRONIZATION kind would have written for the call, from its callback data at the exit, CUPTI
// timestamps taken at its entry and exit, and the stream's CUPTI id when known.
CUpti_ActivitySynchronization2 sync_record(const SyncCallback& call, const CUpti_CallbackData& data, uint64_t start_ns,
    uint64_t end_ns, std::optional<uint32_t> stream_id);

} // namespace fp8scope::collector
