// The NVTX range path of each thread ("train_step/layers.3/mlp/fc2"), kept by the collector itself so that a GEMM
// or a probe can name its site at the moment it is called (docs/collector.md "Tensor statistics": a GEMM site's
// identity includes the NVTX range path). CUPTI records the ranges for the trace; it offers no way to ask for the
// current path, so the collector wraps NVTX's push/pop entry points (entry/nvtx_injection.cpp) and forwards to
// CUPTI's implementation, whose functions NvtxForwarding holds.
#pragma once

#include <atomic>
#include <string_view>

namespace fp8scope::collector {

// CUPTI's NVTX push/pop implementations, which the wrappers forward to (the same functions serve every NVTX module),
// and whether they forward at all. Part of the collector's one object (session/collector.hpp).
struct NvtxForwarding {
    using PushA = int (*)(const char*);
    using PushW = int (*)(const wchar_t*);
    using PushEx = int (*)(const void*); // const nvtxEventAttributes_t*
    using Pop = int (*)();
    std::atomic<PushA> push_a { nullptr };
    std::atomic<PushW> push_w { nullptr };
    std::atomic<PushEx> push_ex { nullptr };
    std::atomic<Pop> pop { nullptr };
    // Off while CUPTI is detached between capture windows (cupti_attachment.hpp): a call into CUPTI then would attach
    // it again. The path is kept either way; a wrapper not forwarding returns the range depth, as NVTX does.
    std::atomic<bool> on { true };
};

// The calling thread's open push/pop ranges joined with '/', outermost first; empty when none. Names are cut
// to keep the path within a fixed buffer (no allocation on the application's threads).
std::string_view current_nvtx_path();
// The calling thread's range depth (the wrappers' answer when they do not forward).
int nvtx_path_depth();

// The wrappers' bookkeeping, also used by unit tests without NVTX.
void nvtx_path_push(std::string_view name);
void nvtx_path_pop();

} // namespace fp8scope::collector
