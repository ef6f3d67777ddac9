// CuptiApi: the CUPTI functions the collector calls, resolved with dlopen/dlsym at CUDA initialization.
//
// libfp8scope.so does not link libcupti: it is preloaded into every process of a job, and a process that never
// initializes CUDA must not load CUPTI (docs/collector.md "Attaching it"). The collector therefore loads CUPTI only
// from InitializeInjection (called by the CUDA driver at cuInit) or from the NVTX injection forwarder.
#pragma once

#include "cupti/cupti_types.hpp"

#include <string>

namespace fp8scope::collector {

struct CuptiApi {
    void* handle = nullptr;
    std::string path; // where the library was found, for messages

    CUptiResult (*getVersion)(uint32_t*) = nullptr;
    CUptiResult (*getResultString)(CUptiResult, const char**) = nullptr;
    CUptiResult (*getTimestamp)(uint64_t*) = nullptr;
    CUptiResult (*getCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;
    CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
    // cuptiSubscribe_v2 (CUDA 12.6+), which names the tool that already holds CUPTI; null on older CUPTI.
    CUptiResult (*subscribeV2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) = nullptr;
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = nullptr;
    CUptiResult (*enableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = nullptr;
    CUptiResult (*activityEnable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*activityDisable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*activityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
    CUptiResult (*activityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
    CUptiResult (*activityEnableLatencyTimestamps)(uint8_t) = nullptr;
    CUptiResult (*activityEnableAllSyncRecords)(uint8_t) = nullptr;
    CUptiResult (*activityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc)
        = nullptr;
    CUptiResult (*activityFlushAll)(uint32_t) = nullptr;
    CUptiResult (*activityFlushPeriod)(uint32_t) = nullptr;
    CUptiResult (*activityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
    CUptiResult (*activityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
    CUptiResult (*activitySetAttribute)(CUpti_ActivityAttribute, size_t*, void*) = nullptr;
    CUptiResult (*setThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
    // The stream id CUPTI's records carry for a CUstream (tensor statistics rows name their stream with it).
    CUptiResult (*getStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t*) = nullptr;
    // External correlation ids mark the collector's own CUDA calls in the trace (own_work.hpp); optional.
    CUptiResult (*pushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
    CUptiResult (*popExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
    // Detaching between capture windows (cupti_attachment.hpp); optional: without them CUPTI stays attached.
    CUptiResult (*enableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = nullptr;
    CUptiResult (*finalize)() = nullptr;
    // Kernel timestamps from the Hardware Event System (CUDA 12.8+; supported on Blackwell only); optional.
    CUptiResult (*activityEnableHWTrace)(uint8_t) = nullptr;

    // "CUPTI_ERROR_NOT_INITIALIZED" for a result code, never null.
    const char* result_name(CUptiResult result) const;
};

// Loads CUPTI once and returns it, or null with `error` set to one line saying what was tried. Thread-safe.
// Search order: FP8SCOPE_CUPTI_PATH; a libcupti already in the process (PyTorch loads its own copy, and two copies
// must not coexist); the loader's search path; next to the loaded libcudart; the CUDA toolkit's usual folders.
const CuptiApi* load_cupti(std::string& error);

} // namespace fp8scope::collector
