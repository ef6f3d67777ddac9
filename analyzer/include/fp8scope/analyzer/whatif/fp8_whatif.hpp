// FP8 what-if (docs/analysis.md "FP8 what-if"): from a BF16 run's trace, what each FP8 recipe would make of its
// step, in eager mode and compiled (or CUDA-graphed), and what each recipe's scale would do to its GEMM operands.
// GEMM time comes from a table of FP8 against BF16 GEMM time measured on the GPU (a data file in calibrate's format,
// shipped_gemm_table()), the bookkeeping from each recipe implementation's measured price (recipe_profiles.cpp), the
// rest from the report's own figures.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/common/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

// One measured GEMM shape on one GPU: C[m x n] = A[m x k] B[k x n], GPU time per call.
struct GemmTimeRow {
    int64_t m = 0, n = 0, k = 0;
    int64_t bf16_ns = 0; // BF16 x BF16 -> BF16
    int64_t fp8_tensorwise_ns = 0; // E4M3 x E4M3 -> BF16, one scale per operand
    std::optional<int64_t> fp8_rowwise_ns; // E4M3 x E4M3 -> BF16, a scale per row of A and per column of B
};

struct GemmTable {
    std::string gpu; // the device name it was measured on
    std::string date;
    std::string method;
    std::vector<GemmTimeRow> rows;
};

// The tables shipped with fp8scope (docs/benchmarks.md "FP8 against BF16 GEMM time"): `fp8scope calibrate --sweep`
// on an H100 and on an H200, 252 shapes from 2 us to 3 ms each, kept as calibrate writes them (gemm_table_json.hpp)
// in data/gemm_tables/, which the build copies to <build>/share/fp8scope/gemm_tables/ and installs to
// <prefix>/share/fp8scope/gemm_tables/ (docs/cli.md "calibrate").
//
// The variable that names the folder holding gemm_tables/ (a share/fp8scope folder) instead of the program's own.
inline constexpr const char* kDataDirVariable = "FP8SCOPE_DATA_DIR";
// Where the shipped tables are read: $FP8SCOPE_DATA_DIR/gemm_tables when that is set, else share/fp8scope/gemm_tables
// in the folder above the running program's (<prefix>/bin/fp8scope reads <prefix>/share/fp8scope/gemm_tables).
Expected<std::filesystem::path> shipped_gemm_table_dir();
// The shipped table's file for a GPU of this name: the H200's (h200.json) for an H200, else the H100's (h100.json).
std::string_view shipped_gemm_table_file(std::string_view gpu);
// The shipped table for a GPU of this name, read once per process (thread-safe; the table lives as long as the
// process); an error naming the file and what is wrong with it when it cannot be read or is not a table.
Expected<const GemmTable*> shipped_gemm_table(std::string_view gpu);

// The FP8 time of a BF16 GEMM of `bf16_ns`: bf16_ns divided by the median speed-up of the table rows whose BF16
// time is within a factor of 2 of it (the nearest row's when none is); the speed-up's first and third quartile over
// those rows give the interval. Below the table's fastest row the speed-up is 1 (and the interval 1): nothing is
// known there.
struct GemmSpeedup {
    double median = 1, low = 1, high = 1; // bf16 time / fp8 time
    int64_t rows = 0; // table rows behind it
};
GemmSpeedup gemm_speedup(const GemmTable& table, int64_t bf16_ns, bool rowwise);

// What one FP8 recipe, as one implementation runs it, costs beside its GEMMs.
struct RecipeProfile {
    std::string_view recipe; // "delayed", "current", "tensorwise", "rowwise"
    std::string_view implementation;
    bool rowwise_gemm = false; // its GEMM time is the table's rowwise column
    // Eager mode: the host time one FP8 GEMM adds (its operands' amax, scale and cast, in the framework), in units
    // of the BF16 job's own host time per launched kernel; nullopt where no run of the implementation was measured.
    std::optional<double> eager_host_units_per_gemm;
    // Eager mode: the kernels it adds per FP8 GEMM (casts, amax reductions, scale updates, transposes).
    std::optional<double> eager_kernels_per_gemm;
    // Eager: the GPU time its unfused bookkeeping kernels (amax, scale, cast, transposed copies, and the
    // element-wise ops around them) add per element of the FP8 GEMMs' A and B operands, from a GPU-bound run;
    // nullopt where none was measured (then the compiled cast traffic stands in).
    std::optional<double> eager_gpu_ns_per_element;
    // Compiled: bytes moved per operand element for the cast, fused (read BF16 2, write E4M3 1, and for current
    // scaling a second read of 2 for the amax before the cast).
    double compiled_bytes_per_element = 3;
    std::string_view source; // where the figures come from
};
std::span<const RecipeProfile> fp8_recipe_profiles();
// The profile of `recipe` ("delayed", ...), or nullptr.
const RecipeProfile* find_recipe_profile(std::string_view recipe);

enum class Fp8Mode { Eager, Compiled };
const char* fp8_mode_name(Fp8Mode mode); // "eager", "compiled"

// The bandwidth a fused cast reaches on the H100 (docs/benchmarks.md: a read-only reduction reads 3.07 TB/s).
inline constexpr double kCastBytesPerNs = 3000.0;
// The shortest kernel an eager cast or amax takes on the GPU (launch to end), whatever its size.
inline constexpr int64_t kMinBookkeepingKernelNs = 2'500;
// The uncertainty of an eager profile's host units: the three measured implementations' units per kernel of host
// time differ by this much from their mean (docs/analysis.md "FP8 what-if").
inline constexpr double kHostUnitsSpread = 0.2;

struct Fp8Prediction {
    std::string recipe, implementation;
    Fp8Mode mode = Fp8Mode::Eager;
    std::string unavailable; // non-empty: no prediction, and why
    int64_t bf16_step_ns = 0; // the BF16 step in this mode: measured (eager), or the CUDA-graph estimate (compiled)
    int64_t gemm_bf16_ns = 0; // per step: the GEMMs that would run in FP8, in BF16
    int64_t gemm_fp8_ns = 0; // ... and in FP8 (median speed-up)
    int64_t bookkeeping_host_ns = 0; // per step, eager: the host time the recipe's bookkeeping adds
    int64_t bookkeeping_gpu_ns = 0; // per step: its kernels' GPU time
    // Compiled without GEMM statistics: the fused casts' traffic is unknown (no operand sizes), and bookkeeping_gpu_ns
    // is 0 for want of it, not measured so.
    bool bookkeeping_known = true;
    int64_t step_ns = 0, step_low_ns = 0, step_high_ns = 0; // the FP8 step, and its interval
    // What the table's columns leave: step_ns = bf16_step_ns - (gemm_bf16_ns - gemm_fp8_ns) + the bookkeeping shown
    // (eager: bookkeeping_host_ns, compiled: bookkeeping_gpu_ns) + rest_ns. Eager, the host or the GPU decides the
    // step, so the added host time and the GPU's work do not simply add (docs/analysis.md, eager prediction).
    int64_t rest_ns = 0;
    double speedup = 0; // bf16_step_ns / step_ns: against the BF16 step in the same mode
    double speedup_vs_measured = 0; // the trace's measured BF16 step (Fp8WhatIf::bf16_step_ns) / step_ns
};

// One GEMM operand of the BF16 run under each per-tensor recipe's scale, over the sampled steps.
struct OperandNumerics {
    int64_t site_id = 0;
    std::string label;
    int64_t steps = 0; // sampled steps with a histogram
    // Current scaling (scale from the step's own amax): nothing clips; the share flushed to zero, median and worst
    // step, in E4M3 (forward operands) and E5M2 (gradients).
    double e4m3_flushed = 0, e4m3_flushed_max = 0;
    double e5m2_flushed = 0, e5m2_flushed_max = 0;
    // Delayed scaling in E4M3 (scale from the largest amax of the kDelayedHistory sampled steps before), over the
    // steps that have such a history: the worst step's clipped share and the median flushed share.
    std::optional<double> delayed_clipped_max, delayed_flushed;
};
inline constexpr size_t kDelayedHistory = 16;
// An operand is named as one that per-tensor scaling hurts when current E4M3 scaling flushes at least this share
// of its values in its median step.
inline constexpr double kHurtFlushShare = 0.01;

// The advice picks a recipe only when it is predicted at least this much faster than the BF16 step in its mode;
// below, it is to stay in BF16.
inline constexpr double kPickSpeedup = 1.05;

// The BF16 step compiled (torch.compile, Inductor's default mode), estimated from an eager trace
// (docs/analysis.md "FP8 what-if", "Compiled from an eager trace"): GEMM, communication and optimizer kernels stay as
// they are (Inductor calls cuBLAS for GEMMs, and compiling the model leaves the optimizer eager); attention kernels
// stay but run kCompiledAttentionFactor times as long; every other kernel is memory-bound element-wise, reduction,
// normalization, softmax, copy or index work, which Inductor fuses into kInductorFusionFactor of its eager time; and
// the launch overhead goes. Both factors were fitted on one eager/compiled twin, the zoo's torchao_eager_bf16
// against torchao_compiled_bf16_ref (a Hugging Face Llama), and are judged on held-out architectures (zoo-fusion).
inline constexpr double kInductorFusionFactor = 0.26;
inline constexpr double kCompiledAttentionFactor = 2.5;

struct CompiledBaseline {
    bool from_eager = false; // false: the trace is compiled or graphed already, its own compiled baseline
    int64_t step_ns = 0; // the compiled BF16 step: estimated (from_eager) or the trace's own
    int64_t kept_ns = 0; // per step, eager GPU time: GEMMs, communication, optimizer
    int64_t attention_ns = 0; // per step, eager GPU time of attention kernels
    int64_t fused_ns = 0; // per step, eager GPU time of the kernels Inductor fuses
    int64_t fused_kernels = 0; // per step
};

struct Fp8WhatIf {
    // Non-empty: no prediction at all, and why (already FP8, no GEMMs, no steps, the shipped table unreadable).
    std::string not_applicable;
    std::string table_gpu; // the GEMM table's GPU
    std::string trace_gpu; // the trace's GPU, when the trace names it
    int64_t steps = 0;
    int64_t bf16_step_ns = 0; // mean analysed step
    int64_t kernels_per_step = 0;
    int64_t host_ns_per_kernel = 0; // (busy + launch idle) / kernels, per step
    int64_t gemm_kernels_per_step = 0;
    int64_t fp8_gemms_per_step = 0; // the GEMMs that would run in FP8
    std::string fp8_gemm_source; // how they were counted
    int64_t operand_elements_per_step = 0; // their A and B operands' elements; 0: unknown (no GEMM statistics)
    int64_t gemm_ns_per_step = 0;
    CompiledBaseline compiled; // the BF16 step the compiled predictions start from
    std::vector<Fp8Prediction> predictions; // every profile, eager then compiled
    std::optional<size_t> best; // the fastest available prediction
    // Predictions as good as the best by this model: at least kPickSpeedup, and at or above the best's low speed-up
    // (BF16 step / its step_high_ns); none when the advice is to stay in BF16.
    std::vector<size_t> ties;
    std::string advice; // one sentence: what to pick and why (never a recipe below kPickSpeedup), and its ties
    std::vector<OperandNumerics> operands; // GEMM operand sites with histograms, most flushed first
    std::vector<std::string> hurt; // labels of operands at or above kHurtFlushShare
};

// A GEMM shape the trace's tensor statistics name: the GEMM-interception sites ("gemm MxNxK", docs/collector.md
// "Tensor statistics") of 2-D, high-precision A operands, and how many of their calls were sampled. What
// `fp8scope calibrate TRACE` measures (docs/cli.md "calibrate").
struct TraceGemmShape {
    int64_t m = 0, n = 0, k = 0;
    int64_t sampled_calls = 0;
};
// In order of m, n, k; empty when the trace was recorded without tensor statistics.
std::vector<TraceGemmShape> trace_gemm_shapes(const TraceModel& model);

Fp8WhatIf predict_fp8(const TraceModel& model, const Report& report, const GemmTable& table);
// With the shipped table for the trace's GPU (shipped_gemm_table() of its first GPU's name). When that table cannot
// be read, a trace that needs it gets no prediction: not_applicable names the file and why.
Fp8WhatIf predict_fp8(const TraceModel& model, const Report& report);

} // namespace fp8scope::analyzer
