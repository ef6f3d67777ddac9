// Zero-code GEMM interception (docs/collector.md "Tensor statistics", GEMM interception). When libfp8scope.so is
// preloaded, these definitions interpose cuBLASLt's cublasLtMatmul and cuBLAS's cublasGemmEx /
// cublasGemmStridedBatchedEx: each forwards to the real function first, then, if the call is sampled, enqueues
// statistics of A, B and D on the GEMM's own stream. The GEMM itself, its arguments and its stream are never changed.
//
// A thread_local depth guard keeps a GEMM that cuBLAS implements through cuBLASLt from being counted twice.
#include "calls/nvtx_paths.hpp"
#include "fp8scope.h"
#include "session/warn.hpp"
#include "stats/gemm_probe.hpp"

#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#define FP8SCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace fp8scope::collector {
namespace {

thread_local int t_depth = 0;

struct DepthGuard {
    DepthGuard() { ++t_depth; }
    ~DepthGuard() { --t_depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
};

// The real `name` from an already loaded library whose file name starts with `library` ("libcublasLt.so"). Not
// dlsym(RTLD_NEXT): PyTorch loads cuBLAS into a local scope (dlopen'ed with its extension modules), where
// RTLD_NEXT from a preloaded library does not look, although the job's own calls still bind to this library first.
// dlsym on the library's own handle searches that library and its dependencies only, never this one.
void* real_symbol(const char* library, const char* name)
{
    struct Search {
        const char* library;
        const char* name;
        void* found;
    } search { library, name, nullptr };
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            const char* path = info->dlpi_name;
            const char* slash = path ? std::strrchr(path, '/') : nullptr;
            const char* base = slash ? slash + 1 : path;
            if (!base || std::strncmp(base, s->library, std::strlen(s->library)) != 0)
                return 0;
            void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
            if (!handle)
                return 0;
            s->found = dlsym(handle, s->name);
            dlclose(handle); // the library stays loaded: the process holds it
            return s->found ? 1 : 0;
        },
        &search);
    return search.found;
}

template <typename Fn> Fn next_symbol(const char* library, const char* name)
{
    return reinterpret_cast<Fn>(real_symbol(library, name));
}

// Functions of the library that defines `anchor`, e.g. cuBLASLt's attribute getters next to cublasLtMatmul.
template <typename Fn> Fn sibling_symbol(void* anchor, const char* name)
{
    Dl_info info {};
    if (!anchor || !dladdr(anchor, &info) || !info.dli_fname)
        return nullptr;
    void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        return nullptr;
    auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
    dlclose(handle); // the library stays loaded: the process holds it
    return fn;
}

// ---- cuBLASLt

using LtMatmulFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
    cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,
    void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);
using LayoutGetFn = cublasStatus_t (*)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*, size_t, size_t*);
using DescGetFn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*);

struct LtApi {
    LtMatmulFn matmul = next_symbol<LtMatmulFn>("libcublasLt.so", "cublasLtMatmul");
    LayoutGetFn layout_get = next_symbol<LayoutGetFn>("libcublasLt.so", "cublasLtMatrixLayoutGetAttribute");
    DescGetFn desc_get = next_symbol<DescGetFn>("libcublasLt.so", "cublasLtMatmulDescGetAttribute");
};

// Resolved on the first call that finds cuBLASLt loaded (it always is, when its function is being called), then
// kept; a failed lookup is retried on the next call rather than remembered.
const LtApi* lt_api()
{
    static std::atomic<const LtApi*> cached { nullptr };
    if (const LtApi* api = cached.load(std::memory_order_acquire))
        return api;
    auto* api = new LtApi;
    if (!api->matmul) {
        delete api;
        return nullptr;
    }
    const LtApi* expected = nullptr;
    if (!cached.compare_exchange_strong(expected, api)) {
        delete api;
        return expected;
    }
    return api;
}

template <typename Fn> Fn cached_symbol(std::atomic<Fn>& cache, const char* library, const char* name)
{
    Fn fn = cache.load(std::memory_order_acquire);
    if (!fn) {
        fn = next_symbol<Fn>(library, name);
        cache.store(fn, std::memory_order_release);
    }
    return fn;
}

template <typename T>
T layout_attribute(
    const LtApi& api, cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, T fallback)
{
    T value {};
    size_t written = 0;
    if (!layout || api.layout_get(layout, attribute, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS
        || written != sizeof value)
        return fallback;
    return value;
}

template <typename T>
T desc_attribute(const LtApi& api, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T fallback)
{
    T value {};
    size_t written = 0;
    if (api.desc_get(desc, attribute, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS
        || written != sizeof value)
        return fallback;
    return value;
}

Operand lt_operand(const LtApi& api, const void* data, cublasLtMatrixLayout_t layout)
{
    Operand op;
    op.data = data;
    op.type = layout_attribute<cudaDataType>(api, layout, CUBLASLT_MATRIX_LAYOUT_TYPE, CUDA_R_32F);
    op.rows = int64_t(layout_attribute<uint64_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_ROWS, 0));
    op.cols = int64_t(layout_attribute<uint64_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_COLS, 0));
    op.ld = layout_attribute<int64_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_LD, 0);
    op.batch = layout_attribute<int32_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
    op.batch_stride = layout_attribute<int64_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
    op.row_major = layout_attribute<int32_t>(api, layout, CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_COL)
        == CUBLASLT_ORDER_ROW;
    return op;
}

// The recipe that a cuBLASLt scale mode stands for (CUBLASLT_MATMUL_MATRIX_SCALE_*, CUDA 12.8 and later); nullopt
// for a mode this build does not know.
std::optional<schema::ScaleRecipe> recipe_of_scale_mode(int32_t mode)
{
    switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F:
        return schema::ScaleRecipe::Tensorwise;
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
        return schema::ScaleRecipe::Rowwise;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
        return schema::ScaleRecipe::Blockwise1x128;
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
        return schema::ScaleRecipe::Blockwise128x128;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0:
        return schema::ScaleRecipe::Mx32;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3:
        return schema::ScaleRecipe::Nvfp4x16;
    default:
        return std::nullopt;
    }
}

bool is_fp8(cudaDataType type)
{
    return type == CUDA_R_8F_E4M3 || type == CUDA_R_8F_E5M2;
}

// A/B/D scale pointers and recipes (docs/collector.md "Tensor statistics": A and B hold scale_inv, D holds the
// quantizing scale). The pointer is read in per-tensor mode only: vector and block scales (rowwise, 1x128,
// 128x128, MXFP8, NVFP4) are arrays, not one factor. A cuBLASLt without the scale-mode attributes (before 12.8)
// scales per tensor.
void lt_scales(const LtApi& api, cublasLtMatmulDesc_t desc, Operand& a, Operand& b, Operand& d)
{
    const auto scale = [&](Operand& op, cublasLtMatmulDescAttributes_t mode_attribute,
                           cublasLtMatmulDescAttributes_t pointer_attribute, probes::ScaleKind kind) {
        const auto mode = desc_attribute<int32_t>(api, desc, mode_attribute, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
        if (is_fp8(op.type)) {
            op.recipe = recipe_of_scale_mode(mode);
            if (!op.recipe)
                warn_once("gemm-scale-mode",
                    "a cuBLASLt GEMM has a scale mode this fp8scope does not know (its "
                    "operands are recorded without a recipe)");
        }
        if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) {
            op.scale_ptr = desc_attribute<const float*>(api, desc, pointer_attribute, nullptr);
            op.scale_kind = kind;
        }
    };
    scale(a, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
        probes::ScaleKind::InvDevicePointer);
    scale(b, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        probes::ScaleKind::InvDevicePointer);
    scale(d, CUBLASLT_MATMUL_DESC_D_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, probes::ScaleKind::DevicePointer);
    d.amax_ptr = desc_attribute<const float*>(api, desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, nullptr);
}

// Whether a cuBLASLt GEMM adds beta * C: C given and beta a nonzero host scalar of the descriptor's scale type. A
// beta on the device is not read (that would need a sync): such a GEMM counts as adding nothing.
bool lt_adds_c(const LtApi& api, cublasLtMatmulDesc_t desc, const void* beta, const void* C)
{
    if (!C || !beta)
        return false;
    const auto mode = desc_attribute<int32_t>(api, desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_HOST);
    if (mode != CUBLASLT_POINTER_MODE_HOST && mode != CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST)
        return false;
    const auto compute = desc_attribute<int32_t>(api, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, CUBLAS_COMPUTE_32F);
    return host_scalar_nonzero(beta, desc_attribute<int32_t>(api, desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, compute));
}

// ---- cuBLAS

using GetPointerModeFn = cublasStatus_t (*)(cublasHandle_t, cublasPointerMode_t*);

// The same for cublasGemm*Ex, whose scalars have the compute type's precision (cuBLAS's own rule).
bool blas_adds_c(void* anchor, cublasHandle_t handle, const void* beta, cublasComputeType_t compute)
{
    static const auto get = sibling_symbol<GetPointerModeFn>(anchor, "cublasGetPointerMode_v2");
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;
    if (!beta || !get || get(handle, &mode) != CUBLAS_STATUS_SUCCESS || mode != CUBLAS_POINTER_MODE_HOST)
        return false;
    return host_scalar_nonzero(beta, int32_t(compute));
}

using GetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t*);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
    cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
    const void*, const void*, cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*,
    void*, cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);

void* cublas_stream(void* anchor, cublasHandle_t handle)
{
    static const auto get = sibling_symbol<GetStreamFn>(anchor, "cublasGetStream_v2");
    cudaStream_t stream = nullptr;
    if (!get || get(handle, &stream) != CUBLAS_STATUS_SUCCESS)
        return nullptr;
    return stream;
}

// A column-major operand of cublasGemm*Ex: op(X) is rows x cols before the transpose.
Operand blas_operand(const void* data, cudaDataType type, cublasOperation_t op, int64_t rows_op, int64_t cols_op,
    int64_t ld, int64_t batch, int64_t stride)
{
    Operand operand;
    operand.data = data;
    operand.type = type;
    const bool transposed = op != CUBLAS_OP_N;
    operand.rows = transposed ? cols_op : rows_op;
    operand.cols = transposed ? rows_op : cols_op;
    operand.ld = ld;
    operand.batch = batch;
    operand.batch_stride = stride;
    return operand;
}

// Runs the real GEMM (`call`) under a depth guard, so that cuBLAS running it through cuBLASLt is not a second GEMM,
// then, for a successful outermost call, `measure`: the GEMM itself is never changed, and nothing thrown while
// measuring reaches the job.
template <typename Call, typename Measure> cublasStatus_t forward_then_measure(Call&& call, Measure&& measure)
{
    cublasStatus_t status;
    {
        DepthGuard inner;
        status = call();
    }
    if (status != CUBLAS_STATUS_SUCCESS || t_depth > 0)
        return status;
    DepthGuard guard;
    try {
        measure();
    } catch (...) {
        warn_once("gemm-hook", "unexpected error while measuring a GEMM (its statistics are missing)");
    }
    return status;
}

} // namespace
} // namespace fp8scope::collector

using namespace fp8scope::collector;

FP8SCOPE_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t a_layout, const void* B, cublasLtMatrixLayout_t b_layout, const void* beta,
    const void* C, cublasLtMatrixLayout_t c_layout, void* D, cublasLtMatrixLayout_t d_layout,
    const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes, cudaStream_t stream)
{
    const LtApi* resolved = lt_api();
    if (!resolved) {
        // Only a caller that bound to this name without cuBLASLt loaded gets here; say so rather than pretend.
        warn_once("gemm-real-lt", "cublasLtMatmul was called but no cuBLASLt library is loaded");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    const LtApi& api = *resolved;
    return forward_then_measure(
        [&] {
            return api.matmul(handle, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D, d_layout, algo,
                workspace, workspace_bytes, stream);
        },
        [&] {
            note_library_gemm(D);
            const GemmGate gate = gemm_gate();
            if (!api.layout_get || !api.desc_get || gate == GemmGate::Skip)
                return; // unsampled, or an older cuBLASLt without the getters: the GEMM runs, unmeasured
            // Layouts and transposes are plain reads of host-side descriptors, no CUDA call.
            Operand a = lt_operand(api, A, a_layout);
            Operand b = lt_operand(api, B, b_layout);
            Operand d = lt_operand(api, D, d_layout);
            d.adds_c = lt_adds_c(api, desc, beta, C);
            const int32_t transa = desc_attribute<int32_t>(api, desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
            const int32_t transb = desc_attribute<int32_t>(api, desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
            const int64_t k = transa != CUBLAS_OP_N ? a.rows : a.cols;
            const std::string_view path = current_nvtx_path();
            const auto site = gemm_site(
                gate, path, d.rows, d.cols, k, d.batch, gemm_types(a.type, b.type, d.type), transa * 16 + transb);
            if (!site)
                return;
            lt_scales(api, desc, a, b, d);
            probe_gemm(a, b, d, d.rows, d.cols, k, path, *site, stream);
        });
}

FP8SCOPE_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void* alpha, const void* A, cudaDataType a_type, int lda, const void* B,
    cudaDataType b_type, int ldb, const void* beta, void* C, cudaDataType c_type, int ldc, cublasComputeType_t compute,
    cublasGemmAlgo_t algo)
{
    static std::atomic<GemmExFn> cache { nullptr };
    const GemmExFn real = cached_symbol(cache, "libcublas.so", "cublasGemmEx");
    if (!real) {
        warn_once("gemm-real-blas", "cublasGemmEx was called but no cuBLAS library is loaded");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return forward_then_measure(
        [&] {
            return real(handle, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, c_type, ldc,
                compute, algo);
        },
        [&] {
            note_library_gemm(C);
            const GemmGate gate = gemm_gate();
            if (gate == GemmGate::Skip)
                return;
            const std::string_view path = current_nvtx_path();
            const auto site = gemm_site(
                gate, path, m, n, k, 1, gemm_types(a_type, b_type, c_type), int32_t(transa) * 16 + int32_t(transb));
            if (!site)
                return;
            void* stream = cublas_stream(reinterpret_cast<void*>(real), handle);
            Operand d = blas_operand(C, c_type, CUBLAS_OP_N, m, n, ldc, 1, 0);
            d.adds_c = blas_adds_c(reinterpret_cast<void*>(real), handle, beta, compute);
            probe_gemm(blas_operand(A, a_type, transa, m, k, lda, 1, 0),
                blas_operand(B, b_type, transb, k, n, ldb, 1, 0), d, m, n, k, path, *site, stream);
        });
}

FP8SCOPE_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, cudaDataType a_type, int lda,
    long long stride_a, const void* B, cudaDataType b_type, int ldb, long long stride_b, const void* beta, void* C,
    cudaDataType c_type, int ldc, long long stride_c, int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    static std::atomic<GemmStridedFn> cache { nullptr };
    const GemmStridedFn real = cached_symbol(cache, "libcublas.so", "cublasGemmStridedBatchedEx");
    if (!real) {
        warn_once("gemm-real-blas", "cublasGemmStridedBatchedEx was called but no cuBLAS library is loaded");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return forward_then_measure(
        [&] {
            return real(handle, transa, transb, m, n, k, alpha, A, a_type, lda, stride_a, B, b_type, ldb, stride_b,
                beta, C, c_type, ldc, stride_c, batch, compute, algo);
        },
        [&] {
            note_library_gemm(C);
            const GemmGate gate = gemm_gate();
            if (gate == GemmGate::Skip)
                return;
            const std::string_view path = current_nvtx_path();
            const auto site = gemm_site(
                gate, path, m, n, k, batch, gemm_types(a_type, b_type, c_type), int32_t(transa) * 16 + int32_t(transb));
            if (!site)
                return;
            void* stream = cublas_stream(reinterpret_cast<void*>(real), handle);
            Operand d = blas_operand(C, c_type, CUBLAS_OP_N, m, n, ldc, batch, stride_c);
            d.adds_c = blas_adds_c(reinterpret_cast<void*>(real), handle, beta, compute);
            probe_gemm(blas_operand(A, a_type, transa, m, k, lda, batch, stride_a),
                blas_operand(B, b_type, transb, k, n, ldb, batch, stride_b), d, m, n, k, path, *site, stream);
        });
}
