#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "model/step_locator.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace fp8scope::analyzer {

namespace {

bool has(std::string_view name, std::string_view part)
{
    return name.find(part) != std::string_view::npos;
}

// Demangled names of templates and C++ functions start with their return type ("void at::native::..."); names of
// extern "C" kernels (nvjet, NCCL) do not.
std::string_view without_return_type(std::string_view name)
{
    if (name.starts_with("void "))
        name.remove_prefix(5);
    return name;
}

// cuBLASLt's Hopper kernels are named nvjet_[smXX_]<types>_<tile>...; <types> has one letter per operand and
// type. In the recorded samples (samples/traces, torch._scaled_mm vs plain bf16 matmuls) the FP8 GEMMs are
// `qqtst` (forward, E4M3 x E4M3) and `qrtst` (dgrad/wgrad, E5M2 gradient), the BF16 ones `tst`: 'q' is E4M3 and
// 'r' is E5M2, 't' BF16, 's' FP32, 'h' FP16.
bool is_nvjet(std::string_view name)
{
    return without_return_type(name).starts_with("nvjet_");
}

std::string_view nvjet_types(std::string_view name)
{
    name = without_return_type(name);
    name.remove_prefix(6); // "nvjet_"
    if (name.starts_with("sm")) {
        const size_t end = name.find('_');
        if (end != std::string_view::npos && end > 2
            && std::all_of(name.begin() + 2, name.begin() + end, [](char c) { return c >= '0' && c <= '9'; }))
            name.remove_prefix(end + 1);
    }
    return name.substr(0, name.find('_'));
}

bool is_nvjet_fp8(std::string_view name)
{
    if (!is_nvjet(name))
        return false;
    const std::string_view types = nvjet_types(name);
    return types.find_first_of("qr") != std::string_view::npos;
}

// FP8 element types as they appear in kernel names: PyTorch (c10::Float8_e4m3fn, float8_copy_kernel_cuda), CUDA
// (__nv_fp8_e4m3), CUTLASS (cutlass::float_e4m3_t), cuBLAS (sm90_xmma_gemm_e4m3e4m3_...), TransformerEngine
// (cast_fp8, fp8_quantize).
// "fp8" counts only as a word of its own (fp8_quantize, cast_fp8, __nv_fp8_e4m3): not followed by a letter, so
// that a name like fp8scope_spin (our own sample kernels) is not taken for an FP8 kernel.
bool has_fp8_word(std::string_view name)
{
    for (size_t at = name.find("fp8"); at != std::string_view::npos; at = name.find("fp8", at + 1)) {
        const size_t next = at + 3;
        if (next == name.size() || !(name[next] >= 'a' && name[next] <= 'z'))
            return true;
    }
    return false;
}

bool has_fp8_type(std::string_view name)
{
    return has(name, "float8") || has_fp8_word(name) || has(name, "e4m3") || has(name, "e5m2");
}

// Inductor's pointwise, reduction and persistent-reduction kernels (triton_poi_/red_/per_fused_<ops>_<n>) name the
// ops they fused; `_scaled_mm` among them is a GEMM's prologue or epilogue fused into elementwise work (issue 44:
// triton_poi_fused__scaled_mm__to_copy_clamp_clone_mul_reciprocal_silu_* was counted as an FP8 GEMM), never the GEMM.
bool is_inductor_elementwise(std::string_view name)
{
    return name.starts_with("triton_poi_") || name.starts_with("triton_red_") || name.starts_with("triton_per_");
}

// The <ops> of triton_{poi,red,per}_fused_<ops>_<n> (lower case), and whether the kernel reduces (red, per).
struct InductorOps {
    std::string_view ops;
    bool reduction = false;
};

std::optional<InductorOps> inductor_fused_ops(std::string_view name)
{
    InductorOps out;
    if (name.starts_with("triton_poi_fused_"))
        out.reduction = false;
    else if (name.starts_with("triton_red_fused_") || name.starts_with("triton_per_fused_"))
        out.reduction = true;
    else
        return std::nullopt;
    name.remove_prefix(std::string_view("triton_poi_fused_").size());
    // The trailing _<n> that numbers kernels within one generated module.
    const size_t last = name.find_last_of('_');
    if (last != std::string_view::npos && last + 1 < name.size()
        && std::all_of(name.begin() + static_cast<std::ptrdiff_t>(last) + 1, name.end(),
            [](char c) { return c >= '0' && c <= '9'; }))
        name = name.substr(0, last);
    out.ops = name;
    return out;
}

// Whether `op` is one of the '_'-joined ops: it starts the list or follows a '_', and ends it or is followed by one.
// Names keep ATen's own underscores, so `clamp` also matches the start of clamp_min (the list cannot tell the op
// clamp_min from clamp followed by min).
bool has_op(std::string_view ops, std::string_view op)
{
    for (size_t at = ops.find(op); at != std::string_view::npos; at = ops.find(op, at + 1)) {
        const size_t end = at + op.size();
        if ((at == 0 || ops[at - 1] == '_') && (end == ops.size() || ops[end] == '_'))
            return true;
    }
    return false;
}

// The ops of FP8 bookkeeping and of moving data: what a kernel that only takes an amax, computes or applies a scale,
// or casts, is made of (its name's ops as the zoo's compiled torchao jobs show them,
// tests/gpu/zoo/compiled/torchao_compiled_hf.py). `_scaled_mm` names the GEMM whose operand the kernel writes.
constexpr std::string_view kBookkeepingOps[] = { "_scaled_mm", "_to_copy", "_unsafe_view", "abs", "alias", "amax",
    "as_strided", "clamp", "clamp_max", "clamp_min", "clone", "copy", "div", "eq", "exp2", "expand", "fill", "floor",
    "full", "ge", "gt", "isinf", "isnan", "le", "log2", "lt", "max", "mul", "ne", "new_ones", "permute", "reciprocal",
    "reshape", "select", "slice", "squeeze", "t", "transpose", "unsqueeze", "view", "where" };

// Whether ops[from..] splits into bookkeeping ops joined by '_' (a short search: names hold at most a few dozen ops).
bool only_bookkeeping_ops(std::string_view ops, size_t from = 0)
{
    if (from == ops.size())
        return true;
    for (std::string_view op : kBookkeepingOps) {
        if (ops.substr(from).starts_with(op)) {
            const size_t end = from + op.size();
            if (end == ops.size())
                return true;
            if (ops[end] == '_' && end + 1 < ops.size() && only_bookkeeping_ops(ops, end + 1))
                return true;
        }
    }
    return false;
}

bool is_gemm(std::string_view name)
{
    if (is_inductor_elementwise(without_return_type(name)))
        return false;
    return is_nvjet(name) || has(name, "gemm") || has(name, "gemv") || has(name, "splitkreduce")
        || has(name, "scaled_mm")
        || (has(name, "triton_tem_fused") && (has(name, "_mm") || has(name, "addmm") || has(name, "bmm")));
}

std::string lowered(std::string_view name)
{
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
        [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    return lower;
}

bool is_inductor_bookkeeping(std::string_view name)
{
    return inductor_bookkeeping(name) != InductorBookkeeping::None;
}

const KernelClassRule kRules[] = {
    { KernelClass::Other, "contains `fp8scope::probes`",
        "fp8scope's own tensor-statistics kernels (GEMM interception, probes, device scalars): the profiler's cost, "
        "not the job's work, and never an FP8 cast even though one is named fp8_stats_kernel",
        [](std::string_view n) { return has(n, "fp8scope::probes"); } },
    { KernelClass::Communication, "contains `nccl` or `msccl`",
        "NCCL's (and MSCCL's) collective and point-to-point kernels (ncclDevKernel_*, ncclKernel_*)",
        [](std::string_view n) { return has(n, "nccl") || has(n, "msccl"); } },
    { KernelClass::Communication,
        "contains `userbuffers`, `nvshmem`, `cross_device_reduce`, `allreduce`, `all_reduce`, `allgather`, "
        "`all_gather`, `reduce_scatter` or `alltoall`",
        "collectives outside NCCL: TransformerEngine's userbuffers (comm/GEMM overlap), NVSHMEM, custom all-reduce "
        "kernels (vLLM cross_device_reduce)",
        [](std::string_view n) {
            return has(n, "userbuffers") || has(n, "nvshmem") || has(n, "cross_device_reduce") || has(n, "allreduce")
                || has(n, "all_reduce") || has(n, "allgather") || has(n, "all_gather") || has(n, "reduce_scatter")
                || has(n, "alltoall");
        } },
    { KernelClass::FusedBookkeeping,
        "an Inductor pointwise or reduction kernel (`triton_{poi,red,per}_fused_<ops>_<n>`) whose ops are a reduction "
        "of `abs` with `max` or `amax`, or `_to_copy` with `clamp` and `reciprocal` (or `div` beside `_scaled_mm`)",
        "torch.compile fuses FP8's amax (abs, then a max reduction; the second stage of a split reduction keeps the "
        "name) and its scale and cast (a clamp to the format's range after multiplying by the reciprocal of the "
        "scale, or dividing each block by its scale for a blockwise GEMM, then a copy to float8) into Triton kernels, "
        "often with the model's own work; the kernels' generated "
        "source is the truth (tests/gpu/zoo/compiled/torchao_compiled_hf.py)",
        is_inductor_bookkeeping },
    { KernelClass::Fp8Gemm, "starts with `nvjet_` and its type field contains `q` (E4M3) or `r` (E5M2)",
        "cuBLASLt's Hopper GEMMs name operand types by letter; torch._scaled_mm records as nvjet_sm90_qqtst_* and "
        "nvjet_sm90_qrtst_*, bf16 matmuls as nvjet_sm90_tst_* (samples/traces)",
        is_nvjet_fp8 },
    { KernelClass::Fp8Gemm, "a GEMM name (rule below) that names an FP8 type (`float8`, `fp8`, `e4m3`, `e5m2`)",
        "cuBLAS sm89/sm90 xmma (gemm_e4m3...), CUTLASS (float_e4m3_t), DeepGEMM (fp8_gemm) and Triton scaled_mm "
        "templates",
        [](std::string_view n) { return is_gemm(n) && (has_fp8_type(n) || has(n, "scaled_mm")); } },
    { KernelClass::OtherGemm,
        "starts with `nvjet_`, or contains `gemm`, `gemv`, `splitkreduce`, or is an Inductor matmul template "
        "(`triton_tem_fused_*mm*`); never an Inductor pointwise or reduction kernel (`triton_poi_`, `triton_red_`, "
        "`triton_per_`), whose `_scaled_mm` is a fused prologue or epilogue",
        "cuBLAS/cuBLASLt (nvjet, xmma, ampere_*gemm), CUTLASS and Triton matmuls in another precision; "
        "splitKreduce finishes a split-K GEMM",
        is_gemm },
    { KernelClass::AmaxScale, "contains `amax`, `absmax`, `compute_scale` or `update_scale`/`scale_update`",
        "named FP8 bookkeeping: TransformerEngine's amax_and_scale_update_kernel and amax reductions, Inductor's "
        "fused abs/amax reductions",
        [](std::string_view n) {
            return has(n, "amax") || has(n, "absmax") || has(n, "compute_scale") || has(n, "update_scale")
                || has(n, "scale_update");
        } },
    { KernelClass::Cast, "names an FP8 type (`float8`, `fp8`, `e4m3`, `e5m2`) or contains `quantize`",
        "kernels that write or read FP8 elements outside a GEMM: PyTorch's .to(float8) (float8_copy_kernel_cuda, "
        "c10::Float8_e4m3fn template arguments), TransformerEngine's cast/cast_transpose, (de)quantize kernels",
        [](std::string_view n) { return has_fp8_type(n) || has(n, "quantize"); } },
    { KernelClass::AmaxScale, "a `reduce_kernel` with `maxnanfunctor` (torch.amax / max)",
        "eager PyTorch computes an FP8 tensor's amax as t.abs().amax() (samples/torch/fp8_linear.py), a max "
        "reduction; training code rarely reduces to a max otherwise, so this is counted as scale bookkeeping",
        [](std::string_view n) { return has(n, "reduce_kernel") && has(n, "maxnanfunctor"); } },
};

} // namespace

std::string_view kernel_class_id(KernelClass cls)
{
    switch (cls) {
    case KernelClass::Fp8Gemm:
        return "fp8_gemm";
    case KernelClass::OtherGemm:
        return "other_gemm";
    case KernelClass::Cast:
        return "cast";
    case KernelClass::AmaxScale:
        return "amax_scale";
    case KernelClass::FusedBookkeeping:
        return "fused_bookkeeping";
    case KernelClass::Communication:
        return "communication";
    case KernelClass::Other:
        return "other";
    }
    return "other";
}

std::string_view kernel_class_label(KernelClass cls)
{
    switch (cls) {
    case KernelClass::Fp8Gemm:
        return "FP8 GEMM";
    case KernelClass::OtherGemm:
        return "other GEMM";
    case KernelClass::Cast:
        return "cast/quantize";
    case KernelClass::AmaxScale:
        return "amax/scale";
    case KernelClass::FusedBookkeeping:
        return "fused bookkeeping";
    case KernelClass::Communication:
        return "communication";
    case KernelClass::Other:
        return "other";
    }
    return "other";
}

bool has_fp32_gemm_inputs(std::string_view name)
{
    for (std::string_view word : { "sgemm", "f32f32_f32f32", "_ffma_", "gemm_f32" })
        if (has(name, word))
            return true;
    // nvjet's first type letter is its A operand's ('s' FP32).
    return is_nvjet(name) && nvjet_types(name).starts_with('s');
}

bool is_bookkeeping(KernelClass cls)
{
    return cls == KernelClass::Cast || cls == KernelClass::AmaxScale || cls == KernelClass::FusedBookkeeping;
}

InductorBookkeeping inductor_bookkeeping(std::string_view lower_name)
{
    const std::optional<InductorOps> fused = inductor_fused_ops(without_return_type(lower_name));
    if (!fused)
        return InductorBookkeeping::None;
    const std::string_view ops = fused->ops;
    const bool amax = fused->reduction && has_op(ops, "abs") && (has_op(ops, "max") || has_op(ops, "amax"));
    // A tensorwise or rowwise cast multiplies by the scale's reciprocal; a blockwise one divides each block by its
    // scale, and a division is FP8's only when the kernel feeds a `_scaled_mm` (clip_grad_norm_ clamps a quotient).
    const bool scaled = has_op(ops, "reciprocal") || (has_op(ops, "div") && has_op(ops, "_scaled_mm"));
    const bool scale_or_cast = has_op(ops, "_to_copy") && has_op(ops, "clamp") && scaled;
    if (!amax && !scale_or_cast)
        return InductorBookkeeping::None;
    return only_bookkeeping_ops(ops) ? InductorBookkeeping::OnlyBookkeeping : InductorBookkeeping::WithModelWork;
}

std::span<const KernelClassRule> kernel_class_rules()
{
    return kRules;
}

KernelClassification classify_kernel_name(std::string_view demangled_name)
{
    // Lower case once per distinct name: rules then compare plain substrings.
    const std::string lower = lowered(demangled_name);
    for (size_t i = 0; i < std::size(kRules); ++i) {
        if (kRules[i].matches(lower))
            return { kRules[i].cls, i };
    }
    return {};
}

bool is_inductor_kernel_name(std::string_view name)
{
    for (std::string_view prefix : { "triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "triton_for_" })
        if (name.starts_with(prefix))
            return true;
    return false;
}

int64_t inductor_kernel_count(const TraceModel& model)
{
    std::vector<int8_t> seen(model.strings.size(), -1); // per name: unknown, no, yes
    int64_t count = 0;
    for (size_t i = 0; i < model.kernels.size(); ++i) {
        // Triton's kernels are not mangled: the demangled name is the function's, else the short name is.
        const StringRef ref
            = model.strings[model.kernels.name[i]].empty() ? model.kernels.short_name[i] : model.kernels.name[i];
        int8_t& known = seen[ref.index];
        if (known < 0)
            known = is_inductor_kernel_name(model.strings[ref]) ? 1 : 0;
        count += known;
    }
    return count;
}

KernelClassCache::KernelClassCache(const TraceModel& model)
    : model_(model)
    , class_of_(model.strings.size(), kUnknown)
{
}

uint8_t KernelClassCache::class_of(StringRef ref)
{
    uint8_t& cached = class_of_[ref.index];
    if (cached == kUnknown) {
        const std::string_view text = model_.strings[ref];
        cached = text.empty() ? kEmpty : static_cast<uint8_t>(classify_kernel_name(text).cls);
    }
    return cached;
}

KernelClassCache::Entry KernelClassCache::of(size_t kernel_row)
{
    StringRef name = model_.kernels.name[kernel_row];
    uint8_t cls = class_of(name);
    if (cls == kEmpty) {
        name = model_.kernels.short_name[kernel_row];
        cls = class_of(name);
        if (cls == kEmpty)
            return { KernelClass::Other, name };
    }
    return { static_cast<KernelClass>(cls), name };
}

std::optional<KernelClass> KernelClassCache::known_class(StringRef name) const
{
    const uint8_t cls = class_of_[name.index];
    if (cls == kUnknown || cls == kEmpty)
        return std::nullopt;
    return static_cast<KernelClass>(cls);
}

double KernelClassReport::share(KernelClass cls) const
{
    return step_ns > 0 ? static_cast<double>(of(cls).time_ns) / static_cast<double>(step_ns) : 0.0;
}

double KernelClassReport::share_of_kernel_time(KernelClass cls) const
{
    return total.time_ns > 0 ? static_cast<double>(of(cls).time_ns) / static_cast<double>(total.time_ns) : 0.0;
}

KernelClassReport classify_kernels(const TraceModel& model, const StepSet& steps, size_t top_n)
{
    KernelClassCache classes(model);
    const KernelTable& kernels = model.kernels;

    KernelClassReport report;
    report.steps.reserve(steps.steps.size());
    for (const StepInterval& step : steps.steps) {
        report.steps.push_back({ .step_index = step.index,
            .step_ns = step.end_ns - step.start_ns,
            .by_class = {},
            .total = {},
            .fused_only_bookkeeping = {} });
        report.step_ns += step.end_ns - step.start_ns;
    }

    // Per-name sums (indexed by StringRef) for the top kernels: no per-kernel allocation or string work.
    std::vector<int64_t> name_time_ns(model.strings.size(), 0), name_count(model.strings.size(), 0);
    // Per name of class FusedBookkeeping: whether it does only bookkeeping (-1: not asked yet).
    std::vector<int8_t> only_bookkeeping(model.strings.size(), -1);
    // Kernels and steps are both sorted by start: one forward walk assigns each kernel to its step.
    detail::StepWalker walker(steps.steps);
    for (size_t k = 0; k < kernels.size(); ++k) {
        const auto [kernel_class, name] = classes.of(k);
        const auto cls = static_cast<size_t>(kernel_class);
        const int64_t start_ns = kernels.start_ns[k];
        const std::optional<size_t> step = walker.position_of(start_ns);
        if (!step)
            continue;
        const int64_t duration_ns = kernels.end_ns[k] - start_ns;
        StepKernelClasses& row = report.steps[*step];
        row.by_class[cls].time_ns += duration_ns;
        row.by_class[cls].count += 1;
        row.total.time_ns += duration_ns;
        row.total.count += 1;
        if (kernel_class == KernelClass::FusedBookkeeping) {
            int8_t& only = only_bookkeeping[name.index];
            if (only < 0)
                only = inductor_bookkeeping(lowered(model.strings[name])) == InductorBookkeeping::OnlyBookkeeping;
            if (only) {
                row.fused_only_bookkeeping.time_ns += duration_ns;
                row.fused_only_bookkeeping.count += 1;
            }
        }
        name_time_ns[name.index] += duration_ns;
        name_count[name.index] += 1;
    }
    for (const StepKernelClasses& row : report.steps) {
        for (size_t c = 0; c < kKernelClassCount; ++c) {
            report.by_class[c].time_ns += row.by_class[c].time_ns;
            report.by_class[c].count += row.by_class[c].count;
        }
        report.total.time_ns += row.total.time_ns;
        report.total.count += row.total.count;
        report.fused_only_bookkeeping.time_ns += row.fused_only_bookkeeping.time_ns;
        report.fused_only_bookkeeping.count += row.fused_only_bookkeeping.count;
    }

    for (uint32_t i = 0; i < model.strings.size(); ++i) {
        const std::optional<KernelClass> cls = classes.known_class(StringRef { i });
        if (!cls)
            continue;
        report.distinct_names[size_t(*cls)] += 1;
        if (name_count[i] > 0)
            report.top[size_t(*cls)].push_back({ StringRef { i }, name_time_ns[i], name_count[i] });
    }
    for (std::vector<TopKernel>& top : report.top) {
        const auto before = [](const TopKernel& a, const TopKernel& b) {
            if (a.time_ns != b.time_ns)
                return a.time_ns > b.time_ns;
            if (a.count != b.count)
                return a.count > b.count;
            return a.name.index < b.name.index;
        };
        const size_t keep = std::min(top_n, top.size());
        std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(keep), top.end(), before);
        top.resize(keep);
    }
    return report;
}

} // namespace fp8scope::analyzer
