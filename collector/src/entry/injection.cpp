// The entry points, the only symbols libfp8scope.so exports (collector/exports.map):
//  - InitializeInjection: the CUDA driver calls it at cuInit when CUDA_INJECTION64_PATH names this library;
//  - InitializeInjectionNvtx2: NVTX calls it at the first NVTX call when NVTX_INJECTION64_PATH names this library;
//    it hands NVTX to CUPTI's own implementation, which turns ranges into MARKER activity records;
//  - a constructor for LD_PRELOAD, which points both variables at this library when they are unset, so that the
//    same two entry points run lazily: nothing happens in a process that never initializes CUDA;
//  - _exit, interposed when preloaded: os._exit() and other exits that skip atexit still finish the trace.
// And the collector's one object with the library's platform (entry.hpp).
#include "entry/entry.hpp"

#include "cupti/cuda_context.hpp"
#include "cupti/cupti_api.hpp"
#include "session/collector.hpp"
#include "session/lifecycle.hpp"
#include "session/warn.hpp"
#include "stats/stats_engine.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#define FP8SCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace fp8scope::collector {
namespace {

// What the collector needs from libfp8scope.so (collector.hpp: CollectorPlatform).
class LibraryPlatform final : public CollectorPlatform {
public:
    const CuptiApi* load_cupti(std::string& error) override { return collector::load_cupti(error); }
    void started(Collector& collector) override { install_lifecycle_hooks(collector); }
    void harvest_tensor_stats(TraceDb& db, bool final) override { collector::harvest_tensor_stats(db, final); }
    std::optional<bool> cuda_context_active() override { return collector::cuda_context_active(); }
};

} // namespace

Collector& the_collector()
{
    static std::once_flag once;
    static Collector* made = nullptr;
    std::call_once(once, [] {
        // Never destroyed: CUPTI may call back until the process is gone, and a forked child must not run
        // destructors that touch the parent's writer thread or file.
        made = new Collector(*new LibraryPlatform);
        Collector::publish(*made);
    });
    return *made;
}

} // namespace fp8scope::collector

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
        fp8scope::collector::the_collector().start();
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
    try {
        if (!fp8scope::collector::wrap_nvtx_ranges(fp8scope::collector::the_collector(), get_export_table))
            fp8scope::collector::warn(
                "cannot follow NVTX ranges in one module (its tensor statistics carry no NVTX path)");
    } catch (...) {
        fp8scope::collector::warn(
            "unexpected error while following NVTX ranges (tensor statistics carry no NVTX path)");
    }
    return 1;
}

FP8SCOPE_EXPORT void _exit(int status)
{
    fp8scope::collector::Collector* c = fp8scope::collector::Collector::get();
    if (c && c->state() == fp8scope::collector::State::Running)
        c->stop("_exit");
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
