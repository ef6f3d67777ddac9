// Tensor health on the real traces recorded with tensor statistics (samples/traces/README.md): train.py FP8 and
// BF16 under `fp8scope record`, GEMM interception and the fp8scope package on, statistics every 10 steps.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

using namespace fp8scope;
using namespace fp8scope::analyzer;

namespace {

TraceModel load_sample(const std::string& name)
{
    auto model = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + name);
    REQUIRE(model);
    return std::move(*model);
}

int64_t sites_where(const TraceModel& model, auto&& predicate)
{
    int64_t n = 0;
    for (const TensorSite& site : model.tensor_sites)
        n += predicate(site) ? 1 : 0;
    return n;
}

} // namespace

TEST_CASE("the recorded FP8 run has per-GEMM-site FP8 statistics named after the modules", "[tensor_health][samples]")
{
    const TraceModel model = load_sample("h200-train-fp8-stats.sqlite");
    const Report report = analyze(model);
    const TensorHealth& health = report.tensor_health;
    // 201 sites sampled in steps 0, 10 and 20: 153 GEMM operands (16 FP8 Linears x 3 GEMMs x A/B/D, plus the BF16
    // LM head's 3 GEMMs x A/B/D) and 48 explicit probes (16 Fp8Linears x input/weight/grad_output).
    CHECK(health.totals.samples == 603);
    CHECK(health.totals.sites == 201);
    CHECK(sites_where(model, [](const TensorSite& s) {
        return s.source == int32_t(schema::StatsSource::GemmInterception);
    }) == 153);
    // The FP8 operands: E4M3 inputs and weights, E5M2 gradients (TransformerEngine's HYBRID format).
    CHECK(sites_where(model, [](const TensorSite& s) { return s.dtype == int32_t(schema::Dtype::E4M3); }) == 64);
    CHECK(sites_where(model, [](const TensorSite& s) { return s.dtype == int32_t(schema::Dtype::E5M2); }) == 32);
    // Warm-up (2 steps) leaves steps 10 and 20.
    CHECK(health.totals.samples_in_steps == 402);
    CHECK(health.totals.steps_with_samples == 2);
    CHECK_FALSE(health.first_nonfinite.has_value());
    // Every FP8 GEMM operand sample carries the scale_inv cuBLASLt got, so it has a headroom figure.
    for (const TensorStats& sample : model.tensor_stats) {
        const TensorSite* site = nullptr;
        for (const TensorSite& s : model.tensor_sites)
            if (s.id == sample.site_id)
                site = &s;
        REQUIRE(site);
        if (site->source == int32_t(schema::StatsSource::GemmInterception) && (site->dtype == 3 || site->dtype == 4)) {
            CHECK(sample.scale_inv.has_value());
            CHECK(tensor_sample_figures(sample).headroom_bits.has_value());
        }
    }
    // Sites are named by annotate's NVTX ranges: the forward pass under train_step, the backward on its own thread.
    std::set<std::string> labels;
    for (const TensorSiteHealth& site : health.sites)
        labels.insert(site.label);
    CHECK(labels.count("train_step/Transformer/blocks.0/blocks.0.fc1 · gemm 4096x4096x1024 #0 · A") == 1);
    CHECK(labels.count("blocks.0.backward/blocks.0.fc1.backward · gemm 1024x4096x4096 #1 · B") == 1);
    REQUIRE_FALSE(health.top_saturation.empty());
    const TensorSiteHealth& worst = health.sites[health.top_saturation.front()];
    INFO(worst.label);
    CHECK(worst.worst_saturation_ratio > 0);
    CHECK(worst.worst_saturation_ratio < 0.01); // a healthy run: delayed scaling clips a few elements at most
}

TEST_CASE("the recorded BF16 run has BF16 GEMM statistics from cublasLt/cublasGemmEx and no FP8 figures",
    "[tensor_health][samples]")
{
    const TraceModel model = load_sample("h200-train-bf16-stats.sqlite");
    const TensorHealth health = analyze(model).tensor_health;
    CHECK(health.totals.samples == 459);
    CHECK(health.totals.sites == 153);
    CHECK(sites_where(model, [](const TensorSite& s) { return s.dtype == int32_t(schema::Dtype::BFloat16); }) == 153);
    // No target format: nothing can saturate, underflow or lack headroom.
    CHECK(health.top_saturation.empty());
    CHECK(health.top_underflow.empty());
    CHECK(health.top_least_headroom.empty());
    CHECK_FALSE(health.first_nonfinite.has_value());
}

TEST_CASE("a planted overflow in a real FP8 run is flagged at its site and step", "[tensor_health][samples]")
{
    // train.py --precision fp8 --plant-overflow 2:20:1000: block 2's fc2 input is multiplied by 1000 in step 20 only,
    // so its delayed scale (from steps before) no longer covers it; statistics every 10 steps.
    const TraceModel model = load_sample("h200-train-fp8-planted-overflow.sqlite");
    const TensorHealth health = analyze(model).tensor_health;
    REQUIRE_FALSE(health.top_saturation.empty());
    const TensorSiteHealth& worst = health.sites[health.top_saturation.front()];
    CHECK(worst.label == "train_step/Transformer/blocks.2/blocks.2.fc2 · input");
    CHECK(worst.worst_saturation_step == 20);
    CHECK(worst.worst_saturation_ratio > 0.9); // x1000 puts nearly every element past 448 / scale
    REQUIRE_FALSE(health.top_least_headroom.empty());
    const TensorSiteHealth& least = health.sites[health.top_least_headroom.front()];
    CHECK(least.label == worst.label);
    CHECK(least.min_headroom_step == 20);
    CHECK(*least.min_headroom_bits < -9.0); // log2(1000) ~ 10 bits short
}

TEST_CASE("under torch.compile every rowwise operand has per-block statistics in every sampled step (issue 44)",
    "[tensor_health][samples]")
{
    // The zoo's compiled torchao rowwise Llama (recorded on an H200 with the dispatcher interception of
    // torch._scaled_mm, which Inductor's extern calls pass through): 28 rowwise GEMMs a step, A and B, sampled in
    // steps 0 and 10.
    const TraceModel model = load_sample("zoo/torchao_compiled_rowwise.sqlite");
    std::set<int64_t> rowwise;
    for (const TensorSite& site : model.tensor_sites)
        if (site.scale_recipe == static_cast<int32_t>(schema::ScaleRecipe::Rowwise))
            rowwise.insert(site.id);
    CHECK(rowwise.size() == 56);
    std::set<std::pair<int64_t, int64_t>> sampled, with_blocks; // (site, step)
    for (const TensorStats& s : model.tensor_stats)
        if (rowwise.contains(s.site_id) && s.step)
            sampled.emplace(s.site_id, *s.step);
    for (const BlockStats& b : model.block_stats) {
        CHECK(rowwise.contains(b.site_id));
        CHECK(b.block_rows == 1); // one scale per row of the outer dimension: a block is a row
        if (b.step)
            with_blocks.emplace(b.site_id, *b.step);
    }
    REQUIRE(sampled.size() == 2 * rowwise.size());
    CHECK(with_blocks == sampled);
    // The report reads them: every rowwise site in the analysed step has its per-block figures.
    const Report report = analyze(model);
    int64_t with_figures = 0;
    for (const TensorSiteHealth& site : report.tensor_health.sites)
        with_figures += rowwise.contains(site.site_id) && site.blocks && site.blocks->samples > 0 ? 1 : 0;
    CHECK(with_figures == 56);
    CHECK_FALSE(report.tensor_health.top_block_spread.empty());
}

TEST_CASE("under torch.compile every blockwise operand has per-block statistics in every sampled step (issue 44)",
    "[tensor_health][samples]")
{
    // The zoo's compiled DeepSeek-V3-style blockwise job (tests/gpu/zoo/deepseek_blockwise.py --compile, recorded on
    // an H200, statistics every step): its truth counts 16 1x128 and 8 128x128 operands a step in the graphs Inductor
    // compiled, which reach torch._scaled_mm through Inductor's extern calls and the dispatcher interception.
    const TraceModel model = load_sample("zoo/deepseek_blockwise_compiled.sqlite");
    std::map<int64_t, int32_t> blockwise; // site -> recipe
    for (const TensorSite& site : model.tensor_sites)
        if (site.scale_recipe == static_cast<int32_t>(schema::ScaleRecipe::Blockwise1x128)
            || site.scale_recipe == static_cast<int32_t>(schema::ScaleRecipe::Blockwise128x128))
            blockwise.emplace(site.id, *site.scale_recipe);
    REQUIRE_FALSE(blockwise.empty());
    std::set<std::pair<int64_t, int64_t>> sampled, with_blocks; // (site, step)
    std::map<int64_t, std::map<int32_t, int64_t>> per_step; // step -> recipe -> operands sampled
    for (const TensorStats& s : model.tensor_stats)
        if (blockwise.contains(s.site_id) && s.step) {
            sampled.emplace(s.site_id, *s.step);
            ++per_step[*s.step][blockwise.at(s.site_id)];
        }
    for (const BlockStats& b : model.block_stats) {
        REQUIRE(blockwise.contains(b.site_id));
        const bool activations = blockwise.at(b.site_id) == static_cast<int32_t>(schema::ScaleRecipe::Blockwise1x128);
        CHECK(b.block_rows == (activations ? 1 : 128));
        CHECK(b.block_cols == 128);
        if (b.step)
            with_blocks.emplace(b.site_id, *b.step);
    }
    CHECK(with_blocks == sampled);
    // Every one of the 20 steps sampled the job's own count of operands per recipe.
    CHECK(per_step.size() == 20);
    for (const auto& [step, recipes] : per_step) {
        INFO("step " << step);
        CHECK(recipes.at(static_cast<int32_t>(schema::ScaleRecipe::Blockwise1x128)) == 16);
        CHECK(recipes.at(static_cast<int32_t>(schema::ScaleRecipe::Blockwise128x128)) == 8);
    }
    const Report report = analyze(model);
    int64_t with_figures = 0, in_report = 0;
    for (const TensorSiteHealth& site : report.tensor_health.sites)
        if (blockwise.contains(site.site_id)) {
            ++in_report;
            with_figures += site.blocks && site.blocks->samples > 0 ? 1 : 0;
        }
    CHECK(in_report > 0);
    CHECK(with_figures == in_report);
}
