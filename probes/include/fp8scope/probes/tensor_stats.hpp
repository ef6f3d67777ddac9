// Per-tensor statistics: a CUDA kernel and its CPU reference twin.
// Definitions of every field, and their sources: docs/tensor-stats.md.
//
// Usage from the collector:
//   void* scratch;  cudaMalloc(&scratch, stats_scratch_bytes());  cudaMemset(scratch, 0, stats_scratch_bytes());
//   StatsResult* out;  cudaHostAlloc(&out, sizeof *out, cudaHostAllocMapped);   // pinned, mapped (UVA)
//   launch_tensor_stats(params, scratch, out, ++sequence, stream);            // asynchronous, no sync
//   ... writer thread: wait until atomic_ref(out->sequence).load(acquire) == sequence, then read *out.
#pragma once

#include "fp8scope/format/schema.hpp"
#include "fp8scope/probes/stats_result.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp8scope::probes {

// How the scale is given; the values are those of fp8scope_scale_kind (probes/include/fp8scope.h). The scale
// multiplies a high-precision value into FP8 range; scale_inv = 1 / scale dequantizes FP8 codes.
enum class ScaleKind : int32_t {
    None = 0, // scale = scale_inv = 1
    Value = 1, // `scale`
    InvValue = 2, // `scale` holds scale_inv
    DevicePointer = 3, // `scale_ptr` points at a float32 scale
    InvDevicePointer = 4 // `scale_ptr` points at a float32 scale_inv
};

struct StatsParams {
    const void* data = nullptr; // numel contiguous elements; device memory for the kernel, host memory for the twin
    uint64_t numel = 0;
    schema::Dtype dtype = schema::Dtype::Float32;
    schema::Fp8Format target = schema::Fp8Format::None; // ignored for FP8 inputs: they carry their own format
    ScaleKind scale_kind = ScaleKind::None;
    float scale = 1.0f;
    const float* scale_ptr = nullptr; // read by the kernel on the device (by the twin on the host)
};

// Tensors up to this many elements (1 TiB of FP8); more is an invalid argument.
inline constexpr uint64_t kMaxStatsNumel = uint64_t { 1 } << 40;

// nullptr when `params` is valid, else why not: an enum value out of range, data missing for numel > 0, data not
// aligned to its element size, numel > kMaxStatsNumel, or a pointer scale kind without a pointer.
const char* check_stats_params(const StatsParams& params);

// The reference twin: one sequential pass on the host. Throws std::invalid_argument on invalid parameters.
StatsResult tensor_stats_cpu(const StatsParams& params);

// Bytes of device scratch one launch needs (about 200 KiB). The caller allocates it once and zeroes it once
// (cudaMemset); every launch leaves it zeroed again for the next. One scratch serves any number of launches in
// stream order, but never two launches that may run at the same time (two streams need two scratches). After a
// launch that failed on the device, zero it again.
size_t stats_scratch_bytes();

// Enqueues ONE kernel on `stream` that computes the statistics of params.data and writes them to *out, with
// out->sequence = `sequence` written last. `sequence` must not be 0, and must differ from the value *out holds
// before the launch, so that a poller can tell the new result from the old one. `out` is device memory or pinned
// host memory mapped into the device's address space; `device_scratch` is 16-byte aligned
// (cudaMalloc's always are). Data, scale pointer, scratch and out must stay valid until the kernel has run.
//
// Asynchronous: no host-device synchronization, no allocation, no memset. Returns cudaErrorInvalidValue for
// invalid arguments (nothing is launched), otherwise the launch's own status. A failed launch does not abort, and
// does not leave its error in the runtime's last-error slot unless an error was already pending there.
cudaError_t launch_tensor_stats(
    const StatsParams& params, void* device_scratch, StatsResult* out, uint64_t sequence, cudaStream_t stream);

// The exponent histogram as TensorStatsRow stores it: the bins from the first to the last nonzero one.
// Empty (first_exponent 0) when every element is zero, NaN or Inf.
struct TrimmedHistogram {
    int32_t first_exponent = 0;
    std::vector<uint64_t> counts;
};
TrimmedHistogram trim_histogram(const StatsResult& result);

} // namespace fp8scope::probes
