#include "cupti/cupti_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

namespace fp8scope::collector {
namespace {

constexpr const char* kSoname = "libcupti.so.13";

// Folders of loaded libcudart copies: PyTorch wheels ship libcupti next to their libcudart.
std::vector<std::string> cudart_folders()
{
    std::vector<std::string> folders;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
            if (name.find("libcudart.so") != std::string_view::npos) {
                const auto slash = name.rfind('/');
                if (slash != std::string_view::npos)
                    static_cast<std::vector<std::string>*>(data)->emplace_back(name.substr(0, slash));
            }
            return 0;
        },
        &folders);
    return folders;
}

template <class F> bool resolve(void* handle, const char* name, F& target)
{
    target = reinterpret_cast<F>(dlsym(handle, name));
    return target != nullptr;
}

bool resolve_all(CuptiApi& api, std::string& missing)
{
    bool ok = true;
    auto need = [&](const char* name, auto& target) {
        if (!resolve(api.handle, name, target)) {
            ok = false;
            missing = name;
        }
    };
    need("cuptiGetVersion", api.getVersion);
    need("cuptiGetResultString", api.getResultString);
    need("cuptiGetTimestamp", api.getTimestamp);
    need("cuptiGetCallbackName", api.getCallbackName);
    need("cuptiSubscribe", api.subscribe);
    need("cuptiUnsubscribe", api.unsubscribe);
    need("cuptiEnableCallback", api.enableCallback);
    need("cuptiActivityEnable", api.activityEnable);
    need("cuptiActivityDisable", api.activityDisable);
    need("cuptiActivityEnableRuntimeApi", api.activityEnableRuntimeApi);
    need("cuptiActivityEnableDriverApi", api.activityEnableDriverApi);
    need("cuptiActivityEnableLatencyTimestamps", api.activityEnableLatencyTimestamps);
    need("cuptiActivityEnableAllSyncRecords", api.activityEnableAllSyncRecords);
    need("cuptiActivityRegisterCallbacks", api.activityRegisterCallbacks);
    need("cuptiActivityFlushAll", api.activityFlushAll);
    need("cuptiActivityFlushPeriod", api.activityFlushPeriod);
    need("cuptiActivityGetNextRecord", api.activityGetNextRecord);
    need("cuptiActivityGetNumDroppedRecords", api.activityGetNumDroppedRecords);
    need("cuptiActivitySetAttribute", api.activitySetAttribute);
    need("cuptiSetThreadIdType", api.setThreadIdType);
    resolve(api.handle, "cuptiSubscribe_v2", api.subscribeV2); // optional
    resolve(api.handle, "cuptiGetStreamIdEx", api.getStreamIdEx); // optional: without it rows carry stream 0
    // optional: without them the collector's own kernels are still told by name, its memsets are not
    resolve(api.handle, "cuptiActivityPushExternalCorrelationId", api.pushExternalCorrelationId);
    resolve(api.handle, "cuptiActivityPopExternalCorrelationId", api.popExternalCorrelationId);
    resolve(api.handle, "cuptiEnableDomain", api.enableDomain); // optional: CUPTI stays attached between windows
    resolve(api.handle, "cuptiFinalize", api.finalize);
    resolve(api.handle, "cuptiActivityEnableHWTrace", api.activityEnableHWTrace); // optional: software timestamps
    return ok;
}

CuptiApi* try_load(const char* path, int extra_flags, std::string& error)
{
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | extra_flags);
    if (!handle)
        return nullptr;
    auto* api = new CuptiApi; // lives for the process: CUPTI may call back at any time until exit
    api->handle = handle;
    Dl_info info {};
    if (dladdr(dlsym(handle, "cuptiGetVersion"), &info) && info.dli_fname)
        api->path = info.dli_fname;
    else
        api->path = path;
    std::string missing;
    if (!resolve_all(*api, missing)) {
        error = api->path + " lacks " + missing + " (CUPTI from CUDA 13 or newer is required)";
        delete api;
        return nullptr;
    }
    return api;
}

CuptiApi* load_once(std::string& error)
{
    if (const char* forced = std::getenv("FP8SCOPE_CUPTI_PATH"); forced && *forced) {
        if (auto* api = try_load(forced, 0, error))
            return api;
        if (error.empty())
            error = std::string("cannot load FP8SCOPE_CUPTI_PATH=") + forced + ": " + dlerror();
        return nullptr;
    }
    if (auto* api = try_load(kSoname, RTLD_NOLOAD, error))
        return api;
    if (auto* api = try_load(kSoname, 0, error))
        return api;
    std::vector<std::string> candidates;
    for (const auto& folder : cudart_folders()) {
        candidates.push_back(folder + "/" + kSoname);
        candidates.push_back(folder + "/../../cuda_cupti/lib/" + kSoname);
    }
    for (const char* root : { "/usr/local/cuda", "/usr/local/cuda-13.0", "/opt/cuda" }) {
        candidates.push_back(std::string(root) + "/extras/CUPTI/lib64/" + kSoname);
        candidates.push_back(std::string(root) + "/lib64/" + kSoname);
    }
    for (const auto& candidate : candidates) {
        if (auto* api = try_load(candidate.c_str(), 0, error))
            return api;
        if (!error.empty())
            return nullptr;
    }
    error = std::string("cannot find ") + kSoname
        + " (searched the loader path, next to libcudart and /usr/local/cuda; set FP8SCOPE_CUPTI_PATH)";
    return nullptr;
}

} // namespace

const char* CuptiApi::result_name(CUptiResult result) const
{
    const char* text = nullptr;
    if (getResultString && getResultString(result, &text) == CUPTI_SUCCESS && text)
        return text;
    return "unknown CUPTI error";
}

const CuptiApi* load_cupti(std::string& error)
{
    static std::once_flag once;
    static CuptiApi* api = nullptr;
    static std::string load_error;
    std::call_once(once, [] { api = load_once(load_error); });
    error = load_error;
    return api;
}

} // namespace fp8scope::collector
