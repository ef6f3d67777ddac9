// Host side of the statistics kernels: argument checks, grid size, launch (the kernels are hp_stats_kernel.cu and
// tensor_stats_kernel.cu).
#include "fp8scope/probes/tensor_stats.hpp"

#include "fp8scope.h"
#include "kernel_launch.hpp"

#include <algorithm>

namespace fp8scope::probes {

namespace {

using numerics::ElementType;
using numerics::Fp8;

// The kernel's mirrored enums must keep the trace's and the C API's numbers.
static_assert(static_cast<int>(ElementType::F32) == static_cast<int>(schema::Dtype::Float32));
static_assert(static_cast<int>(ElementType::BF16) == static_cast<int>(schema::Dtype::BFloat16));
static_assert(static_cast<int>(ElementType::F16) == static_cast<int>(schema::Dtype::Float16));
static_assert(static_cast<int>(ElementType::E4M3) == static_cast<int>(schema::Dtype::E4M3));
static_assert(static_cast<int>(ElementType::E5M2) == static_cast<int>(schema::Dtype::E5M2));
static_assert(static_cast<int>(Fp8::None) == static_cast<int>(schema::Fp8Format::None));
static_assert(static_cast<int>(Fp8::E4M3) == static_cast<int>(schema::Fp8Format::E4M3));
static_assert(static_cast<int>(Fp8::E5M2) == static_cast<int>(schema::Fp8Format::E5M2));
static_assert(static_cast<int>(ElementType::E4M3) == FP8SCOPE_DTYPE_E4M3 && FP8SCOPE_FP8_E5M2 == 2);
static_assert(static_cast<int>(ScaleKind::None) == FP8SCOPE_SCALE_NONE);
static_assert(static_cast<int>(ScaleKind::Value) == FP8SCOPE_SCALE_VALUE);
static_assert(static_cast<int>(ScaleKind::InvValue) == FP8SCOPE_SCALE_INV_VALUE);
static_assert(static_cast<int>(ScaleKind::DevicePointer) == FP8SCOPE_SCALE_DEVICE);
static_assert(static_cast<int>(ScaleKind::InvDevicePointer) == FP8SCOPE_SCALE_INV_DEVICE);
static_assert(static_cast<int>(ScaleKind::InvDevicePointer) == static_cast<int>(model::ScaleCode::InvDevice));
static_assert(kMaxStatsNumel == detail::kMaxNumel);

uint64_t element_bytes(schema::Dtype dtype)
{
    switch (dtype) {
    case schema::Dtype::Float32:
        return 4;
    case schema::Dtype::BFloat16:
    case schema::Dtype::Float16:
        return 2;
    default:
        return 1;
    }
}

} // namespace

namespace detail {

cudaError_t forget_error(cudaError_t error, cudaError_t pending_before)
{
    if (error != cudaSuccess && pending_before == cudaSuccess)
        (void)cudaGetLastError();
    return error;
}

cudaError_t current_sm_count(int& sm_count, cudaError_t pending_before)
{
    int device = 0;
    if (const cudaError_t error = cudaGetDevice(&device); error != cudaSuccess)
        return forget_error(error, pending_before);
    return forget_error(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), pending_before);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

// Enough blocks to fill the device (kBlocksPerSm per SM) but no more than a full group of 16-byte vectors per thread
// gives work to; always enough that no block sees more than kMaxElementsPerBlock elements.
int grid_blocks(uint64_t numel, uint64_t bytes_per_element, int sm_count)
{
    const uint64_t vectors = ceil_div(numel, 16 / bytes_per_element);
    uint64_t blocks = std::min<uint64_t>(ceil_div(vectors, detail::kThreadsPerBlock * detail::kVectorsPerGroup),
        static_cast<uint64_t>(std::max(sm_count, 1)) * detail::kBlocksPerSm);
    blocks = std::max(blocks, ceil_div(numel, detail::kMaxElementsPerBlock));
    return static_cast<int>(std::clamp<uint64_t>(blocks, 1, detail::kMaxBlocks));
}

model::ClassBounds host_class_bounds(ElementType type, Fp8 target, model::ResolvedScale scale)
{
    const model::TargetThresholds thresholds = model::target_thresholds(target, scale);
    switch (type) {
    case ElementType::F32:
        return model::class_bounds<ElementType::F32>(thresholds);
    case ElementType::BF16:
        return model::class_bounds<ElementType::BF16>(thresholds);
    default:
        return model::class_bounds<ElementType::F16>(thresholds);
    }
}

} // namespace detail

const char* check_stats_params(const StatsParams& params)
{
    const auto dtype = static_cast<int32_t>(params.dtype);
    const auto target = static_cast<int32_t>(params.target);
    const auto scale_kind = static_cast<int32_t>(params.scale_kind);
    if (dtype < 0 || dtype > static_cast<int32_t>(schema::Dtype::E5M2))
        return "dtype out of range";
    if (target < 0 || target > static_cast<int32_t>(schema::Fp8Format::E5M2))
        return "target format out of range";
    if (scale_kind < 0 || scale_kind > static_cast<int32_t>(ScaleKind::InvDevicePointer))
        return "scale kind out of range";
    if (params.numel > kMaxStatsNumel)
        return "more than 2^40 elements";
    if (params.numel > 0 && params.data == nullptr)
        return "no data";
    if (reinterpret_cast<uintptr_t>(params.data) % element_bytes(params.dtype) != 0)
        return "data not aligned to its element size";
    if ((params.scale_kind == ScaleKind::DevicePointer || params.scale_kind == ScaleKind::InvDevicePointer)
        && params.scale_ptr == nullptr)
        return "scale pointer missing";
    return nullptr;
}

size_t stats_scratch_bytes()
{
    return sizeof(detail::Scratch);
}

cudaError_t launch_tensor_stats(
    const StatsParams& params, void* device_scratch, StatsResult* out, uint64_t sequence, cudaStream_t stream)
{
    if (check_stats_params(params) != nullptr || device_scratch == nullptr || out == nullptr
        || reinterpret_cast<uintptr_t>(device_scratch) % 16 != 0)
        return cudaErrorInvalidValue;
    const cudaError_t pending_before = cudaPeekAtLastError();
    int sm_count = 0;
    if (const cudaError_t error = detail::current_sm_count(sm_count, pending_before); error != cudaSuccess)
        return error;

    const uint64_t bytes_per_element = element_bytes(params.dtype);
    const auto type = static_cast<ElementType>(params.dtype);
    detail::KernelArgs args {};
    args.data = params.data;
    args.numel = params.numel;
    const uint64_t misalignment = reinterpret_cast<uintptr_t>(params.data) % 16;
    args.head_elements = std::min(params.numel, misalignment == 0 ? 0 : (16 - misalignment) / bytes_per_element);
    args.type = type;
    args.target = numerics::is_fp8(type) ? Fp8::None : static_cast<Fp8>(params.target);
    args.scale_kind = static_cast<model::ScaleCode>(params.scale_kind);
    args.scale = params.scale;
    args.scale_pointer = params.scale_ptr;
    args.scratch = static_cast<detail::Scratch*>(device_scratch);
    args.out = out;
    args.sequence = sequence;
    const bool host_scale = args.scale_kind == model::ScaleCode::None || args.scale_kind == model::ScaleCode::Value
        || args.scale_kind == model::ScaleCode::InvValue;
    if (args.target != Fp8::None && host_scale) { // at most 4 x 31 float predicates, not a search per block
        args.bounds_known = true;
        args.bounds
            = detail::host_class_bounds(type, args.target, model::resolve_scale(args.scale_kind, args.scale, nullptr));
    }
    const int blocks = detail::grid_blocks(params.numel, bytes_per_element, sm_count);
    return detail::forget_error(detail::launch_stats_kernel(args, blocks, stream), pending_before);
}

} // namespace fp8scope::probes
