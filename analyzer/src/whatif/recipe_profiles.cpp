// What each FP8 recipe implementation costs beside its GEMMs (docs/analysis.md "FP8 what-if", recipe profiles).
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <array>

namespace fp8scope::analyzer {

std::span<const RecipeProfile> fp8_recipe_profiles()
{
    // Eager figures from the zoo's FP8 runs and their BF16 twins (samples/traces/zoo, recorded on nvidia-h100-x1):
    // kernels added per FP8 GEMM = (FP8 kernels per step - BF16 kernels per step) / FP8 GEMMs per step; host units
    // = (untraced FP8 step / untraced BF16 step - 1) x traced BF16 step / (the what-if's FP8 GEMMs per step x the
    // BF16 trace's host time per kernel), the GEMMs counted as predict_fp8() counts them in the BF16 trace (the
    // sampled 2-D GEMMs: 27 in bf16_clean_ref, where 24 ran in FP8; 15 in torchao_bf16_ref, where 12 did). The
    // rowwise pair is samples/traces/whatif/mlp_small_rowwise against mlp_small_bf16 (the same 2-block MLP).
    // Eager GPU time per operand element, from GPU-bound runs (samples/traces/whatif/mlp_large_*, a 2-block MLP of
    // width 4096 on 8192 rows): (FP8 busy - BF16 busy + BF16 GEMM time - FP8 run's GEMM time) per step, over the BF16
    // trace's operand elements per step (1.96e9); current scaling takes delayed's (the same Linear, one amax more).
    // Compiled bytes per element: a fused cast's traffic (read BF16 2, write E4M3 1, current scaling's amax read 2),
    // except rowwise's, which Inductor does in more passes (each row's amax, the cast, and each GEMM's output
    // descaled in a pass of its own): fitted on the compiled Llama twins (samples/traces/zoo/torchao_compiled_*),
    // compare's bookkeeping added plus its added kernels' queued gaps per step, x 3.0 TB/s, over the eager BF16
    // twin's (torchao_eager_bf16) operand elements per step.
    // tests/analyzer/whatif/fp8_whatif_real_test.cpp recomputes them from those traces.
    static constexpr std::array<RecipeProfile, 4> kProfiles { {
        { "delayed", "samples/torch/fp8_linear.py (TransformerEngine-style delayed scaling, amax history 16)", false,
            11.58, 25.0, 0.00952, 3,
            "fp8_delayed_clean against bf16_clean_ref: 24 FP8 GEMMs and 600 more kernels a step; untraced 29.07 "
            "against 10.43 ms; GPU: mlp_large_delayed, 18.65 ms more a step" },
        { "current", "samples/torch/fp8_linear.py --scaling current (each cast's own amax)", false, 10.30, 21.0,
            0.00952, 5,
            "fp8_current_clean against bf16_clean_ref: 24 FP8 GEMMs and 504 more kernels a step; untraced 27.00 "
            "against 10.43 ms" },
        { "tensorwise", "torchao Float8Linear, tensorwise (current scaling per tensor)", false, 14.56, 26.0, 0.01817, 5,
            "torchao_tensorwise_clean against torchao_bf16_ref: 12 FP8 GEMMs and 312 more kernels a step; untraced "
            "13.82 against 2.72 ms; GPU: mlp_large_tensorwise, 35.59 ms more a step" },
        { "rowwise", "torchao Float8Linear, rowwise (a scale per row)", true, 22.96, 34.0, 0.01854, 8.8,
            "mlp_small_rowwise against mlp_small_bf16: 12 FP8 GEMMs and 408 more kernels a step; untraced 15.72 "
            "against 2.21 ms; GPU: mlp_large_rowwise, 36.31 ms more a step; compiled: torchao_compiled_rowwise "
            "against torchao_compiled_bf16_ref, 6.14 ms of bookkeeping and its kernels' gaps a step over 2.09e9 "
            "operand elements" },
    } };
    return kProfiles;
}

const RecipeProfile* find_recipe_profile(std::string_view recipe)
{
    for (const RecipeProfile& p : fp8_recipe_profiles())
        if (p.recipe == recipe)
            return &p;
    return nullptr;
}

const char* fp8_mode_name(Fp8Mode mode)
{
    return mode == Fp8Mode::Eager ? "eager" : "compiled";
}

} // namespace fp8scope::analyzer
