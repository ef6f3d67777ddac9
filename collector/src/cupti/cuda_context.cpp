#include "cupti/cuda_context.hpp"

#include <cuda.h>
#include <dlfcn.h>

namespace fp8scope::collector {
namespace {

struct DriverQueries {
    CUresult (*device_count)(int*) = nullptr;
    CUresult (*device_get)(CUdevice*, int) = nullptr;
    CUresult (*primary_state)(CUdevice, unsigned int*, int*) = nullptr;
    CUresult (*current)(CUcontext*) = nullptr;
    bool complete() const { return device_count && device_get && primary_state && current; }
};

DriverQueries resolve()
{
    DriverQueries q;
    // RTLD_NOLOAD: only the driver that is already there (a process that never loaded it has no context).
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver)
        return q;
    // None of these four is renamed by cuda.h's _v2 macros.
    q.device_count = reinterpret_cast<decltype(q.device_count)>(dlsym(driver, "cuDeviceGetCount"));
    q.device_get = reinterpret_cast<decltype(q.device_get)>(dlsym(driver, "cuDeviceGet"));
    q.primary_state = reinterpret_cast<decltype(q.primary_state)>(dlsym(driver, "cuDevicePrimaryCtxGetState"));
    q.current = reinterpret_cast<decltype(q.current)>(dlsym(driver, "cuCtxGetCurrent"));
    dlclose(driver); // the process keeps it loaded
    return q;
}

} // namespace

std::optional<bool> cuda_context_active()
{
    static const DriverQueries q = resolve();
    if (!q.complete())
        return std::nullopt;
    CUcontext current = nullptr;
    if (q.current(&current) == CUDA_SUCCESS && current)
        return true;
    int count = 0;
    if (q.device_count(&count) != CUDA_SUCCESS)
        return std::nullopt;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CUdevice device = 0;
        unsigned int flags = 0;
        int active = 0;
        if (q.device_get(&device, ordinal) != CUDA_SUCCESS || q.primary_state(device, &flags, &active) != CUDA_SUCCESS)
            return std::nullopt;
        if (active)
            return true;
    }
    return false;
}

} // namespace fp8scope::collector
