// The CUDA driver and cuBLASLt functions `fp8scope calibrate` calls, resolved with dlopen/dlsym (nothing is linked).
// Each pointer has the type its header declares, and each symbol is looked up under the name the header's macros
// give it (cuMemAlloc is cuMemAlloc_v2 in cuda.h), so a renamed entry point cannot be called with the wrong ABI.
#pragma once

#include "fp8scope/common/error.hpp"

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace fp8scope::calibrate {

struct CudaDriver {
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuDeviceGetCount) device_count = nullptr;
    decltype(&::cuDeviceGet) device_get = nullptr;
    decltype(&::cuDeviceGetName) device_name = nullptr;
    decltype(&::cuDeviceGetAttribute) device_attribute = nullptr;
    decltype(&::cuDevicePrimaryCtxRetain) primary_retain = nullptr;
    decltype(&::cuDevicePrimaryCtxRelease) primary_release = nullptr;
    decltype(&::cuCtxSetCurrent) set_current = nullptr;
    decltype(&::cuMemAlloc) alloc = nullptr;
    decltype(&::cuMemFree) free = nullptr;
    decltype(&::cuMemcpyHtoD) copy_to_device = nullptr;
    decltype(&::cuStreamCreate) stream_create = nullptr;
    decltype(&::cuStreamDestroy) stream_destroy = nullptr;
    decltype(&::cuStreamSynchronize) stream_sync = nullptr;
    decltype(&::cuStreamBeginCapture) begin_capture = nullptr;
    decltype(&::cuStreamEndCapture) end_capture = nullptr;
    decltype(&::cuGraphInstantiate) graph_instantiate = nullptr;
    decltype(&::cuGraphLaunch) graph_launch = nullptr;
    decltype(&::cuGraphExecDestroy) graph_exec_destroy = nullptr;
    decltype(&::cuGraphDestroy) graph_destroy = nullptr;
    decltype(&::cuEventCreate) event_create = nullptr;
    decltype(&::cuEventDestroy) event_destroy = nullptr;
    decltype(&::cuEventRecord) event_record = nullptr;
    decltype(&::cuEventSynchronize) event_sync = nullptr;
    decltype(&::cuEventElapsedTime) event_elapsed = nullptr;
    decltype(&::cuGetErrorString) error_string = nullptr;
};

struct CublasLt {
    std::string path; // the file that was opened
    decltype(&::cublasLtGetVersion) version = nullptr;
    decltype(&::cublasLtCreate) create = nullptr;
    decltype(&::cublasLtDestroy) destroy = nullptr;
    decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
    decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
    decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
    decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
    decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
    decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
    decltype(&::cublasLtMatmul) matmul = nullptr;
};

// The driver (libcuda.so.1), opened once per process; ErrorCode::Unavailable naming what is missing.
Expected<const CudaDriver*> cuda_driver();
// cuBLASLt: `path` when given, else $FP8SCOPE_CUBLASLT, else libcublasLt.so.<CUBLAS_VER_MAJOR> by the loader's
// search, then in $CUDA_HOME/lib64, /usr/local/cuda/lib64 and /usr/lib/x86_64-linux-gnu. Opened once per process
// (a second call with another path gets the first library).
Expected<const CublasLt*> cublas_lt(const std::string& path);

} // namespace fp8scope::calibrate
