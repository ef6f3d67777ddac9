// Compiled with the CUDA toolkit only: every declaration of cupti_own_types.hpp (the CUPTI types of a build without the
// toolkit) against CUPTI's own headers. A mismatch fails the build.
#define FP8SCOPE_CUPTI_OWN_TYPES_CHECK
#include "cupti/cupti_own_types.hpp"

#include <cupti.h>

#include <cstddef>

namespace own = fp8scope::cupti_own;

#define FP8SCOPE_SAME_VALUE(name)                                                                                      \
    static_assert(static_cast<long long>(own::name) == static_cast<long long>(::name), #name)

FP8SCOPE_SAME_VALUE(CUPTI_SUCCESS);
FP8SCOPE_SAME_VALUE(CUPTI_ERROR_NOT_INITIALIZED);
FP8SCOPE_SAME_VALUE(CUPTI_ERROR_NOT_SUPPORTED);
FP8SCOPE_SAME_VALUE(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
FP8SCOPE_SAME_VALUE(CUPTI_ERROR_UNKNOWN);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_MEMCPY);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_MEMSET);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_DRIVER);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_RUNTIME);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_DEVICE);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_CONTEXT);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_MARKER);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_OVERHEAD);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_MEMCPY2);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE);
FP8SCOPE_SAME_VALUE(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER);
FP8SCOPE_SAME_VALUE(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
FP8SCOPE_SAME_VALUE(CUPTI_API_ENTER);
FP8SCOPE_SAME_VALUE(CUPTI_API_EXIT);
FP8SCOPE_SAME_VALUE(CUPTI_CB_DOMAIN_INVALID);
FP8SCOPE_SAME_VALUE(CUPTI_CB_DOMAIN_DRIVER_API);
FP8SCOPE_SAME_VALUE(CUPTI_CB_DOMAIN_RUNTIME_API);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphUpload);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams);
FP8SCOPE_SAME_VALUE(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz);
FP8SCOPE_SAME_VALUE(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
FP8SCOPE_SAME_VALUE(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
// The domains' id counts grow with new CUDA releases: ours are CUDA 13.0's, never more than the toolkit's.
static_assert(int(own::CUPTI_DRIVER_TRACE_CBID_SIZE) <= int(::CUPTI_DRIVER_TRACE_CBID_SIZE));
static_assert(int(own::CUPTI_RUNTIME_TRACE_CBID_SIZE) <= int(::CUPTI_RUNTIME_TRACE_CBID_SIZE));

static_assert(sizeof(own::CUptiResult) == sizeof(::CUptiResult));
static_assert(sizeof(own::CUpti_ActivityKind) == sizeof(::CUpti_ActivityKind));
static_assert(sizeof(own::CUpti_CallbackDomain) == sizeof(::CUpti_CallbackDomain));
static_assert(sizeof(own::CUpti_CallbackId) == sizeof(::CUpti_CallbackId));
static_assert(sizeof(own::CUpti_Activity) == sizeof(::CUpti_Activity));
static_assert(alignof(own::CUpti_Activity) == alignof(::CUpti_Activity));
static_assert(own::kSubscriberParamsStructSize == CUpti_SubscriberParams_STRUCT_SIZE);
static_assert(sizeof(own::CUpti_SubscriberParams) == sizeof(::CUpti_SubscriberParams));
static_assert(
    offsetof(own::CUpti_SubscriberParams, subscriberName) == offsetof(::CUpti_SubscriberParams, subscriberName));
static_assert(
    offsetof(own::CUpti_SubscriberParams, oldSubscriberName) == offsetof(::CUpti_SubscriberParams, oldSubscriberName));
static_assert(
    offsetof(own::CUpti_SubscriberParams, oldSubscriberSize) == offsetof(::CUpti_SubscriberParams, oldSubscriberSize));
