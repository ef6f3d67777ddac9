// Whether the process holds a CUDA context now, asked of the driver already loaded (libcuda.so.1, which called
// InitializeInjection): the one sign of GPU work that needs no CUPTI, for windowed recordings, where CUPTI records
// nothing between windows (idle_trace.hpp).
#pragma once

#include <optional>

namespace fp8scope::collector {

// True when a primary context of any device is active (cuDevicePrimaryCtxGetState; the runtime API, PyTorch and
// JAX use those) or the calling thread has a current context (cuCtxGetCurrent: one made with cuCtxCreate). Nullopt
// when the driver cannot be asked (not loaded, not initialized yet, an error). Makes only these queries, which never
// create a context; it must not be called while CUPTI waits to be detached at the next API call's exit
// (cupti_attachment.hpp).
std::optional<bool> cuda_context_active();

} // namespace fp8scope::collector
