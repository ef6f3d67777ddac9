// The what-if's model of what torch.compile makes of an eager trace (docs/analysis.md "FP8 what-if", compiled
// prediction).
#include "whatif/compiled_estimate.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "steps/step_period.hpp"
#include "whatif/step_kernels.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <string>

namespace fp8scope::analyzer::detail {
namespace {

// What Inductor makes of an eager kernel when the model is compiled (docs/analysis.md "FP8 what-if").
enum class InductorFate { Kept, Attention, Fused };

bool attention_name(std::string_view lower)
{
    // FlashAttention (pytorch_flash::, flash_fwd/bwd), PyTorch's memory-efficient kernels (fmha_cutlass*), cuDNN's
    // SDPA graphs (cudnn_generated_..._sdpa_..., and the cudnn::fusion helpers of its backward pass, such as
    // compute_dot_do_o and convert_dq_to_16bits), and any kernel that says attention.
    for (std::string_view word : { "flash", "fmha", "sdpa", "attention", "cudnn::fusion::" })
        if (lower.find(word) != std::string_view::npos)
            return true;
    return false;
}

InductorFate inductor_fate(std::string_view name, KernelClass cls)
{
    if (cls == KernelClass::OtherGemm || cls == KernelClass::Fp8Gemm || cls == KernelClass::Communication
        || detail::optimizer_name(name))
        return InductorFate::Kept;
    std::string lower(name.substr(0, 512));
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return attention_name(lower) ? InductorFate::Attention : InductorFate::Fused;
}

// The eager trace's kernel time per step by what Inductor makes of it, and the compiled BF16 step it gives:
// `graphed_ns` (the step without launch overhead) less what fusion saves, plus what attention loses.
} // namespace

CompiledBaseline compiled_from_eager(const TraceModel& model, const StepSet& steps, double graphed_ns)
{
    std::array<double, 3> ns {}; // by InductorFate
    double fused_kernels = 0;
    KernelClassCache classes(model);
    const KernelTable& k = model.kernels;
    std::map<uint32_t, InductorFate> fates; // by name index
    for (size_t i = 0; i < k.size(); ++i) {
        if (!starts_in_analysed_step(steps, k.start_ns[i]))
            continue;
        auto fate = fates.find(k.name[i].index);
        if (fate == fates.end())
            fate = fates.emplace(k.name[i].index, inductor_fate(model.strings[k.name[i]], classes.of(i).cls)).first;
        ns[static_cast<size_t>(fate->second)] += static_cast<double>(std::max<int64_t>(0, k.end_ns[i] - k.start_ns[i]));
        if (fate->second == InductorFate::Fused)
            ++fused_kernels;
    }
    const double n = static_cast<double>(std::max<size_t>(1, steps.steps.size()));
    CompiledBaseline b;
    b.from_eager = true;
    b.kept_ns = std::llround(ns[0] / n);
    b.attention_ns = std::llround(ns[1] / n);
    b.fused_ns = std::llround(ns[2] / n);
    b.fused_kernels = std::llround(fused_kernels / n);
    const double saved = (1 - kInductorFusionFactor) * ns[2] / n;
    const double lost = (kCompiledAttentionFactor - 1) * ns[1] / n;
    b.step_ns = std::llround(std::max(1.0, graphed_ns - saved + lost));
    return b;
}

} // namespace fp8scope::analyzer::detail
