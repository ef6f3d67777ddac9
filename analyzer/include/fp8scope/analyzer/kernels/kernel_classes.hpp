// FP8 overhead: kernels classified by name (docs/analysis.md "FP8 overhead: kernel classes"). The rules are one ordered
// table (kernel_class_rules()); the first rule that matches a kernel's demangled name decides its class. Each distinct
// name is classified once.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

// FusedBookkeeping: a kernel torch.compile's Inductor generated that takes an amax, computes or applies a scale, or
// casts to FP8, possibly fused with the model's own work (issue 44); Cast and AmaxScale are separate kernels that do
// only that.
enum class KernelClass : uint8_t { Fp8Gemm, OtherGemm, Cast, AmaxScale, FusedBookkeeping, Communication, Other };
inline constexpr size_t kKernelClassCount = 7;

// Stable identifiers for reports and JSON: "fp8_gemm", "other_gemm", "cast", "amax_scale", "fused_bookkeeping",
// "communication", "other".
std::string_view kernel_class_id(KernelClass cls);
// Human-readable: "FP8 GEMM", "other GEMM", "cast/quantize", "amax/scale", "fused bookkeeping", "communication",
// "other".
std::string_view kernel_class_label(KernelClass cls);
// The FP8 bookkeeping classes: Cast, AmaxScale and FusedBookkeeping.
bool is_bookkeeping(KernelClass cls);
// A GEMM kernel whose name says its inputs are FP32 (or TF32): cuBLAS's sgemm, xmma's f32f32 inputs, the FFMA path,
// nvjet's 's'-typed A operand. FP8 recipes convert the 16-bit Linear layers' GEMMs; these stay.
bool has_fp32_gemm_inputs(std::string_view demangled_name);

// What an Inductor kernel's name says about FP8 bookkeeping (docs/analysis.md "FP8 overhead: kernel classes").
// Inductor names a pointwise, reduction or persistent-reduction kernel triton_{poi,red,per}_fused_<ops>_<n>, <ops>
// being the ATen ops of the nodes it computes, sorted and joined by '_'. None: not such a kernel, or no bookkeeping
// op; OnlyBookkeeping: every op is an amax, scale, cast or layout op (abs, max/amax, clamp, reciprocal, mul, div,
// exp2/floor/log2, _to_copy, views, transposes, clones; _scaled_mm, whose operand it writes); WithModelWork: the
// kernel also computes the model's own ops (RMSNorm's rsqrt and mean, SiLU, rotary's sin and cos, an add...), and
// the share of its time the bookkeeping takes is not in the name.
enum class InductorBookkeeping : uint8_t { None, OnlyBookkeeping, WithModelWork };
InductorBookkeeping inductor_bookkeeping(std::string_view lower_name);

// One classification rule. `matches` receives the demangled name in lower case.
struct KernelClassRule {
    KernelClass cls;
    std::string_view pattern; // the rule in words, for docs and reports
    std::string_view why; // why a name matching this rule belongs to the class
    bool (*matches)(std::string_view lower_name);
};

// The rules in the order they are tried. A name no rule matches is KernelClass::Other.
std::span<const KernelClassRule> kernel_class_rules();

// The class of one demangled kernel name, and the index of the rule that decided it (nullopt: no rule, Other).
struct KernelClassification {
    KernelClass cls = KernelClass::Other;
    std::optional<size_t> rule;
};
KernelClassification classify_kernel_name(std::string_view demangled_name);

// The class of each kernel row, each distinct name classified once: the demangled name, or the short name when
// the demangled one is empty (then Other when both are). Shared by classify_kernels() and the bubble analysis.
class KernelClassCache {
public:
    explicit KernelClassCache(const TraceModel& model);

    struct Entry {
        KernelClass cls = KernelClass::Other;
        StringRef name; // the name that decided it
    };
    Entry of(size_t kernel_row);
    // The class of a name of() has already classified; nullopt for names it has not met or that were empty.
    std::optional<KernelClass> known_class(StringRef name) const;

private:
    static constexpr uint8_t kUnknown = 0xFF; // not classified yet
    static constexpr uint8_t kEmpty = 0xFE; // empty name
    uint8_t class_of(StringRef ref);

    const TraceModel& model_;
    std::vector<uint8_t> class_of_;
};

struct ClassTotals {
    int64_t time_ns = 0; // sum of kernel durations (not a union: overlapping kernels both count)
    int64_t count = 0;
};

struct StepKernelClasses {
    int64_t step_index = 0; // StepInterval::index
    int64_t step_ns = 0; // step length, the denominator of the shares
    std::array<ClassTotals, kKernelClassCount> by_class {};
    ClassTotals total;
    // The part of by_class[FusedBookkeeping] in kernels that do only bookkeeping
    // (InductorBookkeeping::OnlyBookkeeping); the rest of that class also does the model's own work.
    ClassTotals fused_only_bookkeeping;
};

struct TopKernel {
    StringRef name; // demangled
    int64_t time_ns = 0;
    int64_t count = 0;
};

struct KernelClassReport {
    // One entry per step of the StepSet, in its order. A kernel belongs to the step that contains its start.
    std::vector<StepKernelClasses> steps;
    std::array<ClassTotals, kKernelClassCount> by_class {}; // over all steps
    ClassTotals total;
    ClassTotals fused_only_bookkeeping; // over all steps: see StepKernelClasses
    int64_t step_ns = 0; // sum of the step lengths
    // Per class, the kernel names with the most time over all steps, most first (ties: more kernels, then name
    // index), at most top_n each.
    std::array<std::vector<TopKernel>, kKernelClassCount> top {};
    // Per class, how many distinct names fell in it (over the whole trace, steps or not).
    std::array<int64_t, kKernelClassCount> distinct_names {};

    const ClassTotals& of(KernelClass cls) const { return by_class[static_cast<size_t>(cls)]; }
    // time_ns of the class / step_ns, 0 when there is no step time. Kernel time is summed, so with concurrent
    // streams or several devices this can exceed 1: reports print share_of_kernel_time() instead.
    double share(KernelClass cls) const;
    // time_ns of the class / total.time_ns (the kernel time of all classes), 0 without kernel time: never above 1,
    // and the classes' shares add up to 1.
    double share_of_kernel_time(KernelClass cls) const;
};

// Classifies every kernel of the model by its demangled name (the short name when the demangled one is empty)
// and sums time and count per class and step. O(kernels + distinct names + steps).
KernelClassReport classify_kernels(const TraceModel& model, const StepSet& steps, size_t top_n = 5);

// Kernels that torch.compile's Inductor generated (Triton kernels named triton_poi_, triton_red_, triton_per_,
// triton_tem_...): Inductor picks some of their launch configs by timing candidates on a cold cache, so two runs of
// the job, recorded or not, may differ in the last bits (docs/benchmarks.md, "Never a changed number").
bool is_inductor_kernel_name(std::string_view name);
int64_t inductor_kernel_count(const TraceModel& model);

} // namespace fp8scope::analyzer
