// CuptiSettings: what the session enables in CUPTI, decided once at its start (session_start.cpp,
// session_callbacks.cpp), and the calls that apply it again each time CUPTI is attached again (cupti_attachment.hpp),
// since a CUPTI attached again has forgotten it. Pure calls through the CuptiApi table: no CUDA call, so unit tests
// drive them with a fake table.
#pragma once

#include "cupti/cupti_api.hpp"

#include <cstdint>
#include <vector>

namespace fp8scope::collector {

struct CuptiSettings {
    // Read from the environment at the start (FP8SCOPE_THREAD_IDS, FP8SCOPE_LATENCY_TIMESTAMPS,
    // FP8SCOPE_RESET_CALLBACK).
    bool system_thread_ids = true;
    bool latency_timestamps = false;
    bool reset_callback = true;
    // The activity buffers come zero-filled (BufferPool): CUPTI is told so and does not clear each one itself on the
    // thread that asked for it (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER). Set by the session with its pool.
    bool zeroed_buffers = false;
    // What a capture window switches on and off (CuptiAttachment::open_window): every kind enabled at start but
    // DEVICE and CONTEXT (one record per device or context, needed whenever they appear), and the traced API calls.
    std::vector<CUpti_ActivityKind> window_kinds;
    std::vector<uint32_t> runtime_cbids, driver_cbids;
    bool api_all_kinds = false;
    // The traced API calls come from callbacks on their ids (api_calls.hpp) instead of the RUNTIME and DRIVER
    // activity kinds, which intercept every call (FP8SCOPE_API_SOURCE; needs the subscriber). Indexed by cbid.
    bool api_from_callbacks = false;
    std::vector<uint8_t> runtime_traced, driver_traced;
    // Detaching CUPTI between capture windows (cupti_attachment.hpp): on for step, periodic and time windows when
    // CUPTI has cuptiFinalize and its clock is CLOCK_REALTIME; then every timestamp of ours is read from
    // CLOCK_REALTIME, so that no CUPTI call is made while it is detached.
    bool detach_between_windows = false;
    // Host-blocking syncs come from callbacks on those calls (sync_calls.hpp) instead of the SYNCHRONIZATION kind;
    // FP8SCOPE_SYNC_RECORDS=activity (diagnostic) or no subscriber gives the kind back.
    bool sync_from_callbacks = false;
    // Those calls (sync_calls.hpp: sync_callbacks), noted at the start: their callbacks go on with the session's.
    struct Callback {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
    };
    std::vector<Callback> sync_callbacks;
    std::vector<CUpti_ActivityKind> start_only_kinds; // DEVICE, CONTEXT: enabled again when CUPTI is attached again
};

// The driver calls that instantiate, upload or launch a CUDA graph: one seen rules out detaching
// (cupti_attachment.hpp).
bool is_graph_call(CUpti_CallbackId cbid);

// The traced API calls' callbacks, when their records come from callbacks. Nothing without a subscriber.
void enable_api_callbacks(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber);

// The callbacks the whole session keeps (cuProfilerStart/Stop's are start_locked's): again after each time a detach
// was armed and called off, since enabling the domains wholesale and off again switched every callback of both
// domains off. Nothing without a subscriber.
void enable_session_callbacks(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber);

// The session's CUPTI settings besides its activity kinds, at the start and each time CUPTI is attached again (a
// CUPTI attached again has forgotten them).
void apply_cupti_settings(const CuptiApi& cupti, const CuptiSettings& settings, CUpti_SubscriberHandle subscriber);

} // namespace fp8scope::collector
