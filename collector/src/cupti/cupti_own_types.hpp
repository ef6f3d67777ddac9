// Our declarations of the few CUPTI types, constants and callback signatures that the CUPTI table and the attach and
// detach state machine use, for builds without the CUDA toolkit (cupti_types.hpp). Values are CUPTI's ABI as CUDA 13's
// cupti_result.h, cupti_activity.h, cupti_callbacks.h and the cbid headers define them; cupti_own_types_check.cpp
// compares every one with the toolkit's headers whenever they are present, so the two cannot drift apart.
// Only what the toolkit-free code names is here: the activity records themselves (the decoder's input) are not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fp8scope::cupti_own {

enum CUptiResult {
    CUPTI_SUCCESS = 0,
    CUPTI_ERROR_NOT_INITIALIZED = 15,
    CUPTI_ERROR_NOT_SUPPORTED = 27,
    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
    CUPTI_ERROR_UNKNOWN = 999,
};

enum CUpti_ActivityKind {
    CUPTI_ACTIVITY_KIND_MEMCPY = 1,
    CUPTI_ACTIVITY_KIND_MEMSET = 2,
    CUPTI_ACTIVITY_KIND_DRIVER = 4,
    CUPTI_ACTIVITY_KIND_RUNTIME = 5,
    CUPTI_ACTIVITY_KIND_DEVICE = 8,
    CUPTI_ACTIVITY_KIND_CONTEXT = 9,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    CUPTI_ACTIVITY_KIND_MARKER = 12,
    CUPTI_ACTIVITY_KIND_OVERHEAD = 17,
    CUPTI_ACTIVITY_KIND_MEMCPY2 = 22,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION = 38,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
};

enum CUpti_ActivityFlag {
    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1,
};

enum CUpti_ActivityThreadIdType {
    CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT = 0,
    CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM = 1,
};

enum CUpti_ActivityAttribute {
    CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE = 0,
    CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 5,
};

enum CUpti_ExternalCorrelationKind {
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 = 5,
};

enum CUpti_ApiCallbackSite {
    CUPTI_API_ENTER = 0,
    CUPTI_API_EXIT = 1,
};

enum CUpti_CallbackDomain {
    CUPTI_CB_DOMAIN_INVALID = 0,
    CUPTI_CB_DOMAIN_DRIVER_API = 1,
    CUPTI_CB_DOMAIN_RUNTIME_API = 2,
};

using CUpti_CallbackId = uint32_t;

// The callback ids named by the toolkit-free code and its tests. *_SIZE is CUDA 13.0's count of ids in the domain.
enum CUpti_driver_api_trace_cbid {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel = 307,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate = 513,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch = 514,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz = 515,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2 = 578,
    CUPTI_DRIVER_TRACE_CBID_cuGraphUpload = 580,
    CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz = 581,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags = 643,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams = 656,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz = 657,
    CUPTI_DRIVER_TRACE_CBID_SIZE = 807,
};

enum CUpti_runtime_api_trace_cbid {
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 = 164,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 = 211,
    CUPTI_RUNTIME_TRACE_CBID_SIZE = 523,
};

// Opaque handles.
using CUpti_SubscriberHandle = struct CUpti_Subscriber_st*;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;

// The common head of every activity record (8-byte aligned, as CUPTI packs its records).
struct alignas(8) CUpti_Activity {
    CUpti_ActivityKind kind;
};

// cuptiSubscribe_v2's parameters (CUDA 12.6+).
struct CUpti_SubscriberParams {
    size_t structSize;
    const char* subscriberName;
    char* oldSubscriberName;
    size_t oldSubscriberSize;
};
inline constexpr size_t kSubscriberParamsStructSize = 32;

using CUpti_CallbackFunc
    = void (*)(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata);
using CUpti_BuffersCallbackRequestFunc = void (*)(uint8_t** buffer, size_t* size, size_t* maxNumRecords);
using CUpti_BuffersCallbackCompleteFunc
    = void (*)(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t size, size_t validSize);

} // namespace fp8scope::cupti_own

// As <cupti.h>, in the global namespace: the code names these types as it does CUPTI's. cupti_own_types_check.cpp
// leaves them in their namespace, to compare them with the toolkit's.
#ifndef FP8SCOPE_CUPTI_OWN_TYPES_CHECK
using namespace fp8scope::cupti_own; // NOLINT(google-global-names-in-headers): stands in for <cupti.h>
#define CUpti_SubscriberParams_STRUCT_SIZE (::fp8scope::cupti_own::kSubscriberParamsStructSize)
#ifndef CUPTIAPI
#define CUPTIAPI
#endif
#endif
