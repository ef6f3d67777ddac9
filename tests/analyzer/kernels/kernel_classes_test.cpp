// Kernel classes (docs/analysis.md "FP8 overhead: kernel classes"): the name rules on real kernel names, one
// synthetic scenario with exact per-step sums, and the recorded FP8 and BF16 training samples.
#include "classes_test_support.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// Names as recorded in samples/traces (shortened where the tail does not matter), and a few from other stacks.
constexpr std::string_view kNvjetFp8Forward = "nvjet_sm90_qqtst_128x256_128x4_2x1_v_bz_coopA_TNN";
constexpr std::string_view kNvjetFp8Backward = "nvjet_sm90_qrtst_128x128_128x6_1x2_h_bz_coopA_algo2_TNT";
constexpr std::string_view kNvjetBf16 = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
constexpr std::string_view kXmmaFp32
    = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_"
      "aligna4_alignc4_execute_kernel__5x_cublas";
constexpr std::string_view kFloat8Copy
    = "void at::native::vectorized_elementwise_kernel<4, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)"
      "::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)"
      "::{lambda(float)#1}, std::array<char*, 2ul>)";
constexpr std::string_view kAmaxReduce
    = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<"
      "c10::BFloat16, at::native::MaxNanFunctor<c10::BFloat16> >, unsigned int, c10::BFloat16, 4, 4> >(at::native::"
      "ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::MaxNanFunctor<c10::BFloat16> >, "
      "unsigned int, c10::BFloat16, 4, 4>)";
constexpr std::string_view kAdd = "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<"
                                  "c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<"
                                  "c10::BFloat16>, std::array<char*, 3ul>)";
constexpr std::string_view kNccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// A kernel launched from `host` by a call that ends 5 ns before the kernel starts.
template <typename Host>
void launch_kernel(Scenario& s, Host host, int64_t start_ns, int64_t end_ns, std::string_view name)
{
    s.launch(host, { .api_start_ns = start_ns - 10, .api_end_ns = start_ns - 5 },
        { .start_ns = start_ns, .end_ns = end_ns, .name = std::string(name) });
}

} // namespace

TEST_CASE("kernel names from the recorded samples get their classes", "[kernel_classes]")
{
    CHECK(classify_kernel_name(kNvjetFp8Forward).cls == KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name(kNvjetFp8Backward).cls == KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name(kNvjetBf16).cls == KernelClass::OtherGemm);
    CHECK(classify_kernel_name(kXmmaFp32).cls == KernelClass::OtherGemm);
    CHECK(classify_kernel_name(kFloat8Copy).cls == KernelClass::Cast);
    CHECK(classify_kernel_name(kAmaxReduce).cls == KernelClass::AmaxScale);
    CHECK(classify_kernel_name(kNccl).cls == KernelClass::Communication);
    CHECK(classify_kernel_name(kAdd).cls == KernelClass::Other);
    CHECK_FALSE(classify_kernel_name(kAdd).rule.has_value());
}

TEST_CASE("kernel names of other FP8 stacks get their classes", "[kernel_classes]")
{
    CHECK(classify_kernel_name("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_cgasize1x2x1_warpgroupsize"
                               "1x1x1_execute_segment_k_off_kernel__5x_cublas")
              .cls
        == KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int>, "
                               "cutlass::float_e4m3_t> >(cutlass::gemm::kernel::GemmUniversal<int>::Params)")
              .cls
        == KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name("nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NNN").cls == KernelClass::OtherGemm);
    CHECK(classify_kernel_name("void cublasLt::splitKreduce_kernel<32, 16, int, float, float>(float*)").cls
        == KernelClass::OtherGemm);
    CHECK(classify_kernel_name("void transformer_engine::delayed_scaling_recipe::(anonymous namespace)::"
                               "kernel(float const*, float*, float*)")
              .cls
        == KernelClass::Other); // nothing in the name says amax: honest "other"
    CHECK(classify_kernel_name("void transformer_engine::delayed_scaling_recipe::amax_and_scale_update_kernel(float*)")
              .cls
        == KernelClass::AmaxScale);
    CHECK(classify_kernel_name("void transformer_engine::cast_transpose_kernel<8, 4, __nv_bfloat16, __nv_fp8_e4m3>("
                               "__nv_bfloat16 const*, __nv_fp8_e4m3*)")
              .cls
        == KernelClass::Cast);
    CHECK(classify_kernel_name("void userbuffers_fp16_sum_inplace_gpu_rw(int, int, int)").cls
        == KernelClass::Communication);
    CHECK(classify_kernel_name("triton_red_fused_abs_amax_0").cls == KernelClass::FusedBookkeeping);
    // An NCCL kernel that moves FP8 data is communication, not a cast: communication rules come first.
    CHECK(classify_kernel_name("ncclDevKernel_AllGather_RING_LL(float8_e4m3)").cls == KernelClass::Communication);
}

TEST_CASE("Inductor's pointwise and reduction kernels are never GEMMs, whatever ops they fused (issue 44)",
    "[kernel_classes]")
{
    // From a compiled torchao Float8Linear job (issue 44): the cast of a GEMM's input fused with its scale's
    // reciprocal and a SiLU, named after the _scaled_mm it feeds.
    CHECK(classify_kernel_name("triton_poi_fused__scaled_mm__to_copy_clamp_clone_mul_reciprocal_silu_12").cls
        != KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name("triton_poi_fused__scaled_mm__to_copy_clamp_clone_mul_reciprocal_silu_12").cls
        != KernelClass::OtherGemm);
    CHECK(classify_kernel_name("triton_red_fused_addmm_sum_3").cls != KernelClass::OtherGemm);
    CHECK(classify_kernel_name("triton_per_fused_bmm_softmax_2").cls != KernelClass::OtherGemm);
    // Inductor's matmul templates and extern GEMMs stay GEMMs.
    CHECK(classify_kernel_name("triton_tem_fused__scaled_mm_0").cls == KernelClass::Fp8Gemm);
    CHECK(classify_kernel_name("triton_tem_fused_mm_1").cls == KernelClass::OtherGemm);
    CHECK(classify_kernel_name("nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_TNT").cls == KernelClass::Fp8Gemm);
    // A fused amax reduction is still bookkeeping.
    CHECK(classify_kernel_name("triton_red_fused_abs_amax_0").cls == KernelClass::FusedBookkeeping);
}

// Names from the zoo's compiled torchao Llama (samples/traces/zoo/torchao_compiled_*.truth.json lists what each one's
// generated source does; the zoo's column "fused bookkeeping" checks every one of them).
TEST_CASE("Inductor kernels that take an amax, scale or cast are fused bookkeeping, whole or with model work",
    "[kernel_classes]")
{
    using enum InductorBookkeeping;
    const auto kind = [](std::string_view name) { return inductor_bookkeeping(name); };
    // Only bookkeeping: a weight's amax (tensorwise: max; rowwise: amax), the second stage of a split reduction (no
    // abs in its source, but in its name), a cast to float8 feeding a GEMM, rowwise's power-of-two scales.
    CHECK(kind("triton_red_fused_abs_max_t_4") == OnlyBookkeeping);
    CHECK(kind("triton_per_fused_abs_amax_t_17") == OnlyBookkeeping);
    CHECK(kind("triton_per_fused__to_copy_abs_max_mul_view_11") == OnlyBookkeeping);
    CHECK(kind("triton_poi_fused__scaled_mm__to_copy_clamp_mul_reciprocal_t_view_6") == OnlyBookkeeping);
    CHECK(kind("triton_poi_fused__scaled_mm__to_copy_clamp_clone_exp2_floor_log2_mul_reciprocal_t_view_18")
        == OnlyBookkeeping);
    // Rowwise: descaling a GEMM's 11.5 M outputs by the inverse row and column scales casts nothing, but is FP8's.
    CHECK(kind("triton_poi_fused__to_copy_clamp_exp2_floor_log2_mul_reciprocal_t_13") == OnlyBookkeeping);
    // With model work: RMSNorm taking its output's amax, a SiLU·mul casting its output, rotary, the loss.
    CHECK(kind("triton_red_fused__to_copy_abs_add_max_mean_mul_pow_rsqrt_view_13") == WithModelWork);
    CHECK(kind("triton_poi_fused__scaled_mm__to_copy_clamp_clone_mul_reciprocal_silu_silu_backward_t_view_8")
        == WithModelWork);
    CHECK(kind("triton_red_fused__to_copy__unsafe_view_abs_add_amax_bmm_cat_clone_cos_mul_neg_sin_slice_slice_"
               "backward_transpose_unsqueeze_view_34")
        == WithModelWork);
    // Not bookkeeping: the BF16 run's kernels; a pointwise abs/max is no reduction; an amax's scale computed without
    // a cast or descaling (_to_copy, clamp and reciprocal in a reduction's second stage) still is (the amax rule).
    CHECK(kind("triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0") == None);
    CHECK(kind("triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_2") == None);
    CHECK(kind("triton_poi_fused_abs_max_0") == None);
    CHECK(kind("triton_per_fused__to_copy_abs_clamp_max_mul_reciprocal_silu_view_6") == WithModelWork);
    // Not an Inductor fused kernel at all.
    CHECK(kind("triton_tem_fused__scaled_mm_0") == None);
    CHECK(kind("void at::native::reduce_kernel<512, 1>") == None);
    // The class follows: every bookkeeping kind is one class, split in the report by kind.
    CHECK(classify_kernel_name("triton_red_fused__to_copy_abs_add_max_mean_mul_pow_rsqrt_view_13").cls
        == KernelClass::FusedBookkeeping);
    CHECK(
        classify_kernel_name("triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_2").cls == KernelClass::Other);
    CHECK(is_bookkeeping(KernelClass::FusedBookkeeping));
    CHECK(is_bookkeeping(KernelClass::Cast));
    CHECK_FALSE(is_bookkeeping(KernelClass::Other));
}

TEST_CASE("fused bookkeeping time is split into kernels that only do bookkeeping and the others", "[kernel_classes]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    const auto kernel = [&](int64_t start_ns, int64_t end_ns, std::string_view name) {
        launch_kernel(s, host, start_ns, end_ns, name);
    };
    for (int64_t step = 0; step < 2; ++step) {
        const int64_t at = 100 + step * 1000;
        kernel(at, at + 10, "triton_red_fused_abs_max_t_4"); // only bookkeeping: 10
        kernel(at + 100, at + 130, "triton_red_fused__to_copy_abs_add_max_mean_mul_pow_rsqrt_view_13"); // model work
        kernel(at + 200, at + 205, "triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_2"); // other
    }
    const TraceModel model = load_scenario(s, "kernel_classes_fused_split");
    const KernelClassReport k = classify_kernels(model, make_steps({ { 100, 1100 }, { 1100, 2100 } }));
    REQUIRE(k.steps.size() == 2);
    CHECK(k.of(KernelClass::FusedBookkeeping).time_ns == 80);
    CHECK(k.of(KernelClass::FusedBookkeeping).count == 4);
    CHECK(k.fused_only_bookkeeping.time_ns == 20);
    CHECK(k.fused_only_bookkeeping.count == 2);
    CHECK(k.steps[1].fused_only_bookkeeping.time_ns == 10);
    CHECK(k.of(KernelClass::Other).time_ns == 10);
}

TEST_CASE("fp8scope's own statistics kernels are other, never an FP8 cast", "[kernel_classes]")
{
    for (const char* name : { "void fp8scope::probes::detail::(anonymous "
                              "namespace)::fp8_stats_kernel(fp8scope::probes::detail::KernelArgs)",
             "void fp8scope::probes::detail::(anonymous "
             "namespace)::hp_stats_kernel(fp8scope::probes::detail::KernelArgs)" }) {
        INFO(name);
        const auto result = classify_kernel_name(name);
        CHECK(result.cls == KernelClass::Other);
        REQUIRE(result.rule.has_value());
        CHECK(*result.rule == 0);
    }
}

TEST_CASE("names that only contain the letters fp8 inside a word are not FP8 kernels", "[kernel_classes]")
{
    // The CUDA ground-truth samples' kernels: fp8scope_spin and fp8scope_tiny are plain kernels.
    CHECK(classify_kernel_name("fp8scope_spin").cls == KernelClass::Other);
    CHECK(classify_kernel_name("fp8scope_tiny(int*)").cls == KernelClass::Other);
    CHECK(classify_kernel_name("void cast_fp8<float>(float const*)").cls == KernelClass::Cast);
    CHECK(classify_kernel_name("fp8_quantize_kernel").cls == KernelClass::Cast);
}

TEST_CASE("every classification rule is documented and decides some name", "[kernel_classes]")
{
    const std::vector<std::string_view> names {
        kNccl, "void userbuffers_fp16_sum_inplace_gpu_rw(int)", kNvjetFp8Forward,
        "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n", kNvjetBf16, "triton_red_fused_abs_amax_0", kFloat8Copy, kAmaxReduce,
        "void transformer_engine::delayed_scaling_recipe::amax_and_scale_update_kernel(float*)",
        "void fp8scope::probes::detail::(anonymous namespace)::fp8_stats_kernel(fp8scope::probes::detail::KernelArgs)"
    };
    std::set<size_t> decided;
    for (const std::string_view name : names) {
        const auto result = classify_kernel_name(name);
        REQUIRE(result.rule.has_value());
        CHECK(kernel_class_rules()[*result.rule].cls == result.cls);
        decided.insert(*result.rule);
    }
    CHECK(decided.size() == kernel_class_rules().size());
    for (const KernelClassRule& rule : kernel_class_rules()) {
        CHECK_FALSE(rule.pattern.empty());
        CHECK_FALSE(rule.why.empty());
    }
}

TEST_CASE("time and count per class and step are sums over the kernels starting in the step", "[kernel_classes]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    const auto kernel = [&](int64_t start_ns, int64_t end_ns, std::string_view name) {
        launch_kernel(s, host, start_ns, end_ns, name);
    };
    kernel(50, 60, kNvjetFp8Forward); // before the first step: not counted
    // Step 0 [100, 1100): FP8 GEMM 300 + 200, cast 50, amax 20, other 30.
    kernel(100, 400, kNvjetFp8Forward);
    kernel(400, 450, kFloat8Copy);
    kernel(450, 470, kAmaxReduce);
    kernel(470, 670, kNvjetFp8Backward);
    kernel(670, 700, kAdd);
    // Step 1 [1100, 2100): a BF16 GEMM of 500 that ends after the step (counted whole), NCCL 100.
    kernel(1200, 1300, kNccl);
    kernel(1900, 2400, kNvjetBf16);
    kernel(2500, 2600, kAdd); // after the last step
    const TraceModel model = load_scenario(s, "kernel_classes_sums");

    const KernelClassReport report = classify_kernels(model, make_steps({ { 100, 1100 }, { 1100, 2100 } }), 1);
    REQUIRE(report.steps.size() == 2);
    const auto& step0 = report.steps[0].by_class;
    CHECK(report.steps[0].step_ns == 1000);
    CHECK(step0[size_t(KernelClass::Fp8Gemm)].time_ns == 500);
    CHECK(step0[size_t(KernelClass::Fp8Gemm)].count == 2);
    CHECK(step0[size_t(KernelClass::Cast)].time_ns == 50);
    CHECK(step0[size_t(KernelClass::AmaxScale)].time_ns == 20);
    CHECK(step0[size_t(KernelClass::Other)].time_ns == 30);
    CHECK(step0[size_t(KernelClass::OtherGemm)].count == 0);
    CHECK(report.steps[0].total.time_ns == 600);
    CHECK(report.steps[0].total.count == 5);
    const auto& step1 = report.steps[1].by_class;
    CHECK(step1[size_t(KernelClass::OtherGemm)].time_ns == 500);
    CHECK(step1[size_t(KernelClass::Communication)].time_ns == 100);
    CHECK(report.steps[1].total.count == 2);

    CHECK(report.step_ns == 2000);
    CHECK(report.total.time_ns == 1200);
    CHECK(report.total.count == 7);
    CHECK(report.of(KernelClass::Fp8Gemm).time_ns == 500);
    CHECK(report.share(KernelClass::Fp8Gemm) == Approx(0.25));
    CHECK(report.share(KernelClass::Cast) == Approx(0.025));

    // Top kernels: one per class asked; the forward FP8 GEMM (300 in steps) beats the backward one (200).
    const auto& top_fp8 = report.top[size_t(KernelClass::Fp8Gemm)];
    REQUIRE(top_fp8.size() == 1);
    CHECK(model.strings[top_fp8[0].name] == kNvjetFp8Forward);
    CHECK(top_fp8[0].time_ns == 300);
    CHECK(top_fp8[0].count == 1);
    CHECK(report.top[size_t(KernelClass::Other)].size() == 1);
    CHECK(report.distinct_names[size_t(KernelClass::Fp8Gemm)] == 2);
}

TEST_CASE("no steps: nothing is counted, shares are zero", "[kernel_classes]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.launch(host, { .api_start_ns = 0, .api_end_ns = 5 },
        { .start_ns = 10, .end_ns = 20, .name = std::string(kNvjetFp8Forward) });
    const TraceModel model = load_scenario(s, "kernel_classes_no_steps");
    const KernelClassReport report = classify_kernels(model, StepSet {});
    CHECK(report.steps.empty());
    CHECK(report.total.count == 0);
    CHECK(report.share(KernelClass::Fp8Gemm) == 0.0);
}

TEST_CASE("the recorded FP8 training sample: FP8 GEMMs, casts and amax reductions", "[kernel_classes][sample]")
{
    const TraceModel model = load_sample("h100-train-fp8.sqlite");
    const StepSet steps = nvtx_steps(model, "train_step");
    REQUIRE(steps.steps.size() == 30);
    const KernelClassReport report = classify_kernels(model, steps);
    // 16 Fp8Linear layers x 3 GEMMs (forward, dgrad, wgrad) x 30 steps, all nvjet q* kernels.
    CHECK(report.of(KernelClass::Fp8Gemm).count == 1440);
    CHECK(report.steps[5].by_class[size_t(KernelClass::Fp8Gemm)].count == 48);
    // Three casts per layer and step (input, weight, grad_output) through float8_copy_kernel_cuda.
    CHECK(report.of(KernelClass::Cast).count == 1440);
    // Two max reductions per cast: the tensor's abs().amax() and the history's amax().
    CHECK(report.of(KernelClass::AmaxScale).count == 2880);
    CHECK(report.of(KernelClass::Communication).count == 0);
    CHECK(report.total.count == 46107);
    CHECK(report.share(KernelClass::Cast) > 0.0);
    CHECK(report.share(KernelClass::AmaxScale) > 0.0);
    CHECK(report.share(KernelClass::Fp8Gemm) > 0.0);
    INFO("FP8 GEMM " << report.share(KernelClass::Fp8Gemm) << ", cast " << report.share(KernelClass::Cast)
                     << ", amax/scale " << report.share(KernelClass::AmaxScale) << " of step time");
    CHECK(report.top[size_t(KernelClass::Fp8Gemm)].size() == 4);
}

TEST_CASE("the recorded BF16 training sample has no FP8 kernels", "[kernel_classes][sample]")
{
    const TraceModel model = load_sample("h100-train-bf16.sqlite");
    const StepSet steps = nvtx_steps(model, "train_step");
    REQUIRE(steps.steps.size() == 30);
    const KernelClassReport report = classify_kernels(model, steps);
    CHECK(report.of(KernelClass::Fp8Gemm).count == 0);
    CHECK(report.of(KernelClass::Cast).count == 0);
    CHECK(report.of(KernelClass::AmaxScale).count == 0);
    CHECK(report.of(KernelClass::OtherGemm).count > 0);
    CHECK(report.total.count == 10104);
}
