// API call records from CUPTI callbacks (FP8SCOPE_API_SOURCE=callbacks; docs/collector.md, "API calls").
//
// CUPTI's RUNTIME and DRIVER activity kinds intercept every runtime and driver call of the job once they are on,
// whichever call ids are filtered in (measured on the H100: the filtered set costs what the whole kinds cost,
// docs/benchmarks.md). Callbacks enabled on the traced ids alone leave every other call untouched. At a traced
// call's entry the thread's stack takes its start; at its exit a CUpti_ActivityAPI record is built, as CUPTI would
// have written it (the callback's correlationId is the one its kernels, copies and memsets carry: cupti_callbacks.h),
// and appended to the thread's batch, which goes to the sink when full and whenever flush_api_calls() is called.
// A traced driver call made inside a traced runtime call (cudaLaunchKernel's cuLaunchKernel, same correlation id)
// makes no record, as with the activity kinds. No CUPTI or CUDA call is made here, so the logic is tested without
// a GPU.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace fp8scope::collector {

struct ApiCall {
    CUpti_ActivityAPI record {};
    bool own_work = false; // made by the collector itself (own_work.hpp)
};
using ApiCallBatch = std::vector<ApiCall>;
// Takes a batch (to the writer); false: it was dropped.
using ApiCallSink = std::function<bool(ApiCallBatch&&)>;

inline constexpr size_t kApiCallBatch = 512;

// Set once, before any callback can record; a later call replaces it (tests).
void set_api_call_sink(ApiCallSink sink);

// At a traced call's entry: its start, on the calling thread's stack. `generation` counts CUPTI attachments: a
// stack left from an earlier attachment (a call whose exit CUPTI never reported) starts over. `recording`: a
// capture window is open.
void api_call_enter(
    CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t now_ns, uint64_t generation, bool recording);

// At its exit: the record, kept when a window was open at its entry or is open now (`keep`), so that a launch
// racing a window's edge never leaves a kernel without its launch call. An exit without its entry (the callbacks
// were switched on mid-call) keeps nothing.
void api_call_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data, uint64_t now_ns,
    uint64_t generation, bool keep, uint32_t pid);

// Every thread's pending records to the sink (the periodic flush, a window's end, before a detach, at the end).
// Returns the records the sink refused.
int64_t flush_api_calls();

// The collector's own CUDA calls on this thread (own_work.hpp's scope counts here too).
void enter_own_work();
void leave_own_work();

} // namespace fp8scope::collector
