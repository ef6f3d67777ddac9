// The entry points, the only symbols libfp8scope.so exports (collector/exports.map):
//  - InitializeInjection: the CUDA driver calls it at cuInit when CUDA_INJECTION64_PATH names this library;
//  - InitializeInjectionNvtx2: NVTX calls it at the first NVTX call when NVTX_INJECTION64_PATH names this library;
//    it hands NVTX to CUPTI's own implementation, which turns ranges into MARKER activity records;
//  - a constructor for LD_PRELOAD, which points both variables at this library when they are unset, so that the
//    same two entry points run lazily: nothing happens in a process that never initializes CUDA;
//  - _exit, interposed when preloaded: os._exit() and other exits that skip atexit still finish the trace.
#include "calls/nvtx_paths.hpp"
#include "cupti/cupti_api.hpp"
#include "session/session.hpp"
#include "session/warn.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#define FP8SCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::string own_path()
{
    Dl_info info {};
    if (dladdr(reinterpret_cast<void*>(&own_path), &info) && info.dli_fname)
        return info.dli_fname;
    return {};
}

__attribute__((constructor)) void on_preload()
{
    const std::string self = own_path();
    if (self.empty() || self.front() != '/')
        return;
    setenv("CUDA_INJECTION64_PATH", self.c_str(), 0);
    setenv("NVTX_INJECTION64_PATH", self.c_str(), 0);
}

} // namespace

FP8SCOPE_EXPORT int InitializeInjection(void)
{
    // 1 tells the driver the injection loaded; the collector's own failures are warnings, never the job's.
    try {
        fp8scope::collector::start_session();
    } catch (...) {
        fp8scope::collector::warn("unexpected error while starting (this process is not traced)");
    }
    return 1;
}

FP8SCOPE_EXPORT int InitializeInjectionNvtx2(void* get_export_table)
{
    using Init = int (*)(void*);
    std::string error;
    const auto* cupti = fp8scope::collector::load_cupti(error);
    if (!cupti)
        return 0; // NVTX calls stay no-ops; InitializeInjection reports the missing CUPTI once
    auto init = reinterpret_cast<Init>(dlsym(cupti->handle, "InitializeInjectionNvtx2"));
    if (!init || !init(get_export_table))
        return 0;
    // On top of CUPTI's handlers: the per-thread range path that names tensor-statistics sites.
    if (!fp8scope::collector::wrap_nvtx_ranges(get_export_table))
        fp8scope::collector::warn("cannot follow NVTX ranges in one module (its tensor statistics carry no NVTX path)");
    return 1;
}

FP8SCOPE_EXPORT void _exit(int status)
{
    if (fp8scope::collector::session_state() == fp8scope::collector::State::Running)
        fp8scope::collector::stop_session("_exit");
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
