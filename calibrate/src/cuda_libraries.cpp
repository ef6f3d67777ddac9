// dlopen/dlsym of the CUDA driver and cuBLASLt for `fp8scope calibrate` (cuda_libraries.hpp).
#include "cuda_libraries.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

// The name a header's macros give an entry point: FP8SCOPE_SYMBOL(cuMemAlloc) is "cuMemAlloc_v2".
#define FP8SCOPE_SYMBOL_TEXT(name) #name
#define FP8SCOPE_SYMBOL(name) FP8SCOPE_SYMBOL_TEXT(name)

namespace fp8scope::calibrate {
namespace {

template <class F> bool resolve(void* library, const char* name, F& fn, std::string& missing)
{
    fn = reinterpret_cast<F>(dlsym(library, name));
    if (!fn && missing.empty())
        missing = name;
    return fn != nullptr;
}

Expected<CudaDriver> open_driver()
{
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        return make_error(ErrorCode::Unavailable, "no CUDA driver on this machine (libcuda.so.1 cannot be opened)");
    CudaDriver d;
    std::string missing;
#define FP8SCOPE_RESOLVE(field, name) resolve(library, FP8SCOPE_SYMBOL(name), d.field, missing)
    FP8SCOPE_RESOLVE(init, cuInit);
    FP8SCOPE_RESOLVE(device_count, cuDeviceGetCount);
    FP8SCOPE_RESOLVE(device_get, cuDeviceGet);
    FP8SCOPE_RESOLVE(device_name, cuDeviceGetName);
    FP8SCOPE_RESOLVE(device_attribute, cuDeviceGetAttribute);
    FP8SCOPE_RESOLVE(primary_retain, cuDevicePrimaryCtxRetain);
    FP8SCOPE_RESOLVE(primary_release, cuDevicePrimaryCtxRelease);
    FP8SCOPE_RESOLVE(set_current, cuCtxSetCurrent);
    FP8SCOPE_RESOLVE(alloc, cuMemAlloc);
    FP8SCOPE_RESOLVE(free, cuMemFree);
    FP8SCOPE_RESOLVE(copy_to_device, cuMemcpyHtoD);
    FP8SCOPE_RESOLVE(stream_create, cuStreamCreate);
    FP8SCOPE_RESOLVE(stream_destroy, cuStreamDestroy);
    FP8SCOPE_RESOLVE(stream_sync, cuStreamSynchronize);
    FP8SCOPE_RESOLVE(begin_capture, cuStreamBeginCapture);
    FP8SCOPE_RESOLVE(end_capture, cuStreamEndCapture);
    FP8SCOPE_RESOLVE(graph_instantiate, cuGraphInstantiate);
    FP8SCOPE_RESOLVE(graph_launch, cuGraphLaunch);
    FP8SCOPE_RESOLVE(graph_exec_destroy, cuGraphExecDestroy);
    FP8SCOPE_RESOLVE(graph_destroy, cuGraphDestroy);
    FP8SCOPE_RESOLVE(event_create, cuEventCreate);
    FP8SCOPE_RESOLVE(event_destroy, cuEventDestroy);
    FP8SCOPE_RESOLVE(event_record, cuEventRecord);
    FP8SCOPE_RESOLVE(event_sync, cuEventSynchronize);
    FP8SCOPE_RESOLVE(event_elapsed, cuEventElapsedTime);
    FP8SCOPE_RESOLVE(error_string, cuGetErrorString);
#undef FP8SCOPE_RESOLVE
    if (!missing.empty())
        return make_error(ErrorCode::Unavailable, "the CUDA driver is too old: libcuda.so.1 has no " + missing);
    return d;
}

Expected<CublasLt> open_cublas_lt(const std::string& given)
{
    const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    std::vector<std::string> candidates;
    if (!given.empty()) {
        candidates.push_back(given);
    } else if (const char* env = std::getenv("FP8SCOPE_CUBLASLT"); env && *env) {
        candidates.emplace_back(env);
    } else {
        candidates.push_back(soname);
        if (const char* home = std::getenv("CUDA_HOME"); home && *home)
            candidates.push_back(std::string(home) + "/lib64/" + soname);
        candidates.push_back("/usr/local/cuda/lib64/" + soname);
        candidates.push_back("/usr/lib/x86_64-linux-gnu/" + soname);
    }
    void* library = nullptr;
    std::string opened;
    for (const std::string& path : candidates) {
        library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library) {
            opened = path;
            break;
        }
    }
    if (!library)
        return make_error(ErrorCode::Unavailable,
            "cuBLASLt cannot be opened (tried " + candidates.front()
                + (candidates.size() > 1 ? " and the CUDA directories" : "")
                + "; set FP8SCOPE_CUBLASLT or --cublaslt)");
    CublasLt lt;
    lt.path = opened;
    std::string missing;
#define FP8SCOPE_RESOLVE(field, name) resolve(library, FP8SCOPE_SYMBOL(name), lt.field, missing)
    FP8SCOPE_RESOLVE(version, cublasLtGetVersion);
    FP8SCOPE_RESOLVE(create, cublasLtCreate);
    FP8SCOPE_RESOLVE(destroy, cublasLtDestroy);
    FP8SCOPE_RESOLVE(desc_create, cublasLtMatmulDescCreate);
    FP8SCOPE_RESOLVE(desc_destroy, cublasLtMatmulDescDestroy);
    FP8SCOPE_RESOLVE(desc_set, cublasLtMatmulDescSetAttribute);
    FP8SCOPE_RESOLVE(layout_create, cublasLtMatrixLayoutCreate);
    FP8SCOPE_RESOLVE(layout_destroy, cublasLtMatrixLayoutDestroy);
    FP8SCOPE_RESOLVE(preference_create, cublasLtMatmulPreferenceCreate);
    FP8SCOPE_RESOLVE(preference_destroy, cublasLtMatmulPreferenceDestroy);
    FP8SCOPE_RESOLVE(preference_set, cublasLtMatmulPreferenceSetAttribute);
    FP8SCOPE_RESOLVE(heuristic, cublasLtMatmulAlgoGetHeuristic);
    FP8SCOPE_RESOLVE(matmul, cublasLtMatmul);
#undef FP8SCOPE_RESOLVE
    if (!missing.empty()) {
        dlclose(library);
        return make_error(ErrorCode::Unavailable, "'" + opened + "' is not a usable cuBLASLt: it has no " + missing);
    }
    return lt;
}

} // namespace

Expected<const CudaDriver*> cuda_driver()
{
    static const Expected<CudaDriver> driver = open_driver();
    if (!driver)
        return std::unexpected(driver.error());
    return &*driver;
}

Expected<const CublasLt*> cublas_lt(const std::string& path)
{
    static std::mutex mutex;
    static std::optional<Expected<CublasLt>> lt;
    const std::lock_guard lock(mutex);
    if (!lt || !*lt)
        lt = open_cublas_lt(path);
    if (!*lt)
        return std::unexpected(lt->error());
    return &**lt;
}

} // namespace fp8scope::calibrate
