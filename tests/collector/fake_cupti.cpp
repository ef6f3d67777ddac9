// The fakes of fake_cupti.hpp: a CUPTI table whose every entry records its call and answers as the test's world says.
#include "fake_cupti.hpp"

#include <cstring>

namespace fp8scope::collector::testing {

FakeWorld* g_world = nullptr;

void record(std::string what)
{
    g_world->calls.push_back({ std::move(what), g_world->recording.load() });
}

// record() for the fakes that always succeed.
CUptiResult recorded(std::string what)
{
    record(std::move(what));
    return CUPTI_SUCCESS;
}
std::string kind_name(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return "KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return "MEMSET";
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return "DEVICE";
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        return "CONTEXT";
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return "DRIVER";
    default:
        return std::to_string(static_cast<int>(kind));
    }
}

std::string domain_name(CUpti_CallbackDomain domain)
{
    return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "RUNTIME" : domain == CUPTI_CB_DOMAIN_DRIVER_API ? "DRIVER" : "?";
}

CUpti_SubscriberHandle fake_handle()
{
    static int token = 0;
    return reinterpret_cast<CUpti_SubscriberHandle>(&token);
}

CUptiResult fake_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*)
{
    record("subscribe");
    if (g_world->subscribe_result == CUPTI_SUCCESS)
        *subscriber = fake_handle();
    return g_world->subscribe_result;
}

CUptiResult fake_subscribe_v2(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* params)
{
    record(std::string("subscribe_v2 ") + params->subscriberName);
    if (g_world->subscribe_result == CUPTI_SUCCESS)
        *subscriber = fake_handle();
    else if (params->oldSubscriberName && params->oldSubscriberSize > g_world->holder.size())
        std::strcpy(params->oldSubscriberName, g_world->holder.c_str());
    return g_world->subscribe_result;
}

CUptiResult fake_result_string(CUptiResult result, const char** text)
{
    *text = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
        : result == CUPTI_ERROR_NOT_INITIALIZED                      ? "CUPTI_ERROR_NOT_INITIALIZED"
        : result == CUPTI_ERROR_NOT_SUPPORTED                        ? "CUPTI_ERROR_NOT_SUPPORTED"
                                                                     : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

// cuptiActivityEnableRuntimeApi/DriverApi: the ids switched on are listed, those switched off only counted.
CUptiResult api_id(const char* what, CUpti_CallbackId cbid, uint8_t on)
{
    if (!on) {
        ++g_world->api_ids_off;
        return CUPTI_SUCCESS;
    }
    return recorded(what + std::to_string(cbid) + " 1");
}

CuptiApi fake_cupti()
{
    CuptiApi api;
    api.getResultString = fake_result_string;
    api.subscribe = fake_subscribe;
    api.subscribeV2 = fake_subscribe_v2;
    api.enableCallback = [](uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
        return recorded(
            "enableCallback " + std::to_string(on) + " " + domain_name(domain) + " " + std::to_string(cbid));
    };
    api.enableDomain = [](uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
        return recorded("enableDomain " + std::to_string(on) + " " + domain_name(domain));
    };
    api.activityEnable = [](CUpti_ActivityKind kind) { return recorded("enable " + kind_name(kind)); };
    api.activityDisable = [](CUpti_ActivityKind kind) { return recorded("disable " + kind_name(kind)); };
    api.activityEnableRuntimeApi = [](CUpti_CallbackId cbid, uint8_t on) { return api_id("runtimeApi ", cbid, on); };
    api.activityEnableDriverApi = [](CUpti_CallbackId cbid, uint8_t on) { return api_id("driverApi ", cbid, on); };
    api.activityEnableLatencyTimestamps
        = [](uint8_t on) { return recorded("latencyTimestamps " + std::to_string(on)); };
    api.activityEnableAllSyncRecords = [](uint8_t on) { return recorded("allSyncRecords " + std::to_string(on)); };
    api.activityRegisterCallbacks = [](CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
        return recorded("registerCallbacks");
    };
    api.activityFlushAll = [](uint32_t flags) { return recorded("flushAll " + std::to_string(flags)); };
    api.activitySetAttribute = [](CUpti_ActivityAttribute attribute, size_t* size, void* value) {
        std::string what = "setAttribute " + std::to_string(static_cast<int>(attribute));
        if (size && value && *size == 1)
            what += " " + std::to_string(*static_cast<uint8_t*>(value));
        return recorded(what);
    };
    api.activityFlushPeriod = [](uint32_t ms) { return recorded("flushPeriod " + std::to_string(ms)); };
    api.setThreadIdType = [](CUpti_ActivityThreadIdType type) {
        return recorded(type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? "threadIdType SYSTEM" : "threadIdType DEFAULT");
    };
    api.finalize = [] {
        record("finalize");
        return g_world->finalize_result;
    };
    api.activityEnableHWTrace = [](uint8_t on) {
        record("enableHWTrace " + std::to_string(on));
        return g_world->hw_trace_result;
    };
    return api;
}

std::string callback(uint32_t on, const char* domain, CUpti_CallbackId cbid)
{
    return "enableCallback " + std::to_string(on) + " " + domain + " " + std::to_string(cbid);
}

// enable_session_callbacks for the Rig's settings: cudaDeviceReset's, the graph calls', the traced API calls'.
std::vector<std::string> session_callbacks()
{
    std::vector<std::string> calls { callback(1, "RUNTIME", kReset) };
    for (CUpti_CallbackId cbid :
        { CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
            CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
            CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload,
            CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz })
        calls.push_back(callback(1, "DRIVER", cbid));
    calls.push_back(callback(1, "RUNTIME", kLaunch));
    calls.push_back(callback(1, "DRIVER", kDriverLaunch));
    return calls;
}

std::vector<std::string> joined(std::vector<std::string> first, const std::vector<std::string>& then)
{
    first.insert(first.end(), then.begin(), then.end());
    return first;
}

} // namespace fp8scope::collector::testing
