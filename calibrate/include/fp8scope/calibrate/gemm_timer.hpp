// `fp8scope calibrate` (docs/cli.md "calibrate"): FP8 against BF16 GEMM time by shape, measured with cuBLASLt on
// this machine's GPU, for the FP8 what-if's GEMM table (docs/analysis.md "FP8 what-if").
//
// Nothing here links CUDA: the driver (libcuda.so.1) and cuBLASLt (libcublasLt.so.<major of the headers it was
// built with>) are opened with dlopen when a measurement starts, so the CLI runs on machines without either and
// says so with ErrorCode::Unavailable.
#pragma once

#include "fp8scope/common/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fp8scope::calibrate {

// C[m x n] = A[m x k] B[k x n].
struct GemmShape {
    int64_t m = 0, n = 0, k = 0;
    auto operator<=>(const GemmShape&) const = default;
};

struct TimerOptions {
    int device = 0; // CUDA device ordinal
    int reps = 11; // graph replays timed per shape and type (the three types in turn); the median is kept
    int calls_per_graph = 20; // GEMM calls captured in the CUDA graph that is replayed
    std::string cublaslt_path; // empty: FP8SCOPE_CUBLASLT, then the usual names and CUDA directories
};

// One shape's GPU time per call, in ns.
struct GemmTiming {
    GemmShape shape;
    int64_t bf16_ns = 0; // BF16 x BF16 -> BF16
    int64_t fp8_tensorwise_ns = 0; // E4M3 x E4M3 -> BF16, one float scale per operand
    std::optional<int64_t> fp8_rowwise_ns; // a scale per row of A and per column of B (cuBLASLt's outer-vector
                                           // scaling); nullopt where this cuBLASLt has no algorithm for it
};

struct TimerResult {
    std::string gpu; // the device's name
    std::string cublaslt; // the library that was opened, and its version
    std::string method; // how each figure was measured, one line
    std::vector<GemmTiming> timings; // in the order of the shapes asked for
};

// The shapes of the standard sweep (the shipped table's): m in 256..16384 and n, k in 256..8192, powers of two.
std::vector<GemmShape> standard_sweep();

// Largest m, n or k measured: a bigger shape is refused (ErrorCode::Usage) rather than run out of GPU memory.
inline constexpr int64_t kMaxDimension = 65'536;

// Times every shape in BF16, FP8 tensorwise and FP8 rowwise: for each, a CUDA graph of `calls_per_graph`
// cublasLtMatmul calls on random operands (3 warm-up calls first); the three graphs replayed in turn `reps` times,
// each replay between two CUDA events; the median per call. The first shape gets 50 more replays, not kept, to bring
// the GPU to its working clock. `progress(done, total)` is called after each shape. Errors: Unavailable (no driver, no
// device, no cuBLASLt, no FP8 GEMM on this GPU), Usage (a shape out of range, no shape), Io (a CUDA call failed
// mid-way: out of memory).
Expected<TimerResult> time_gemms(std::span<const GemmShape> shapes, const TimerOptions& options,
    const std::function<void(size_t done, size_t total)>& progress = {});

} // namespace fp8scope::calibrate
