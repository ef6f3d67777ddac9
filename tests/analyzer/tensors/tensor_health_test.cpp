// Tensor health (docs/analysis.md "Tensor health"): one scenario per rule with exact expected numbers. The
// per-sample figures and site labels are checked on hand-made rows; the per-site analysis on scenarios written
// through the real writer and loaded back.
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "tensor_test_support.hpp"

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::WithinAbs;

namespace {

TensorStats stats_of(const TensorStatsRow& row)
{
    TensorStats s;
    s.site_id = row.site_id;
    s.dtype = static_cast<int32_t>(row.dtype);
    s.target_format = static_cast<int32_t>(row.target_format);
    s.numel = row.numel;
    s.scale = row.scale;
    s.scale_inv = row.scale_inv;
    s.amax = row.amax;
    s.nans = row.nans;
    s.infs = row.infs;
    s.overflows = row.overflows;
    s.underflows = row.underflows;
    s.saturated = row.saturated;
    return s;
}

} // namespace

TEST_CASE("per-sample figures: saturation, underflow, headroom for E4M3 and E5M2, availability", "[tensor_health]")
{
    TensorStatsRow row = healthy_sample(1, 0, 0);
    row.saturated = 3;
    row.overflows = 5; // TE's count is larger: the larger one is what the cast clipped
    row.underflows = 20;
    row.scale_inv = 0.5;
    row.amax = 56; // 448 * 0.5 / 56 = 4
    TensorSampleFigures f = tensor_sample_figures(stats_of(row));
    CHECK(f.saturation_ratio == 0.005);
    CHECK(f.underflow_ratio == 0.02);
    CHECK(f.headroom_bits == 2.0);

    // E5M2 with only the scale known: scale_inv = 1/4; 57344 * 0.25 / 7168 = 2.
    row.target_format = schema::Fp8Format::E5M2;
    row.scale = 4.0;
    row.scale_inv.reset();
    row.amax = 7168;
    CHECK(tensor_sample_figures(stats_of(row)).headroom_bits == 1.0);

    // FP8 codes at a GEMM: the dtype gives the format; underflow is not observable.
    row = healthy_sample(1, 0, 0);
    row.dtype = schema::Dtype::E4M3;
    row.target_format = schema::Fp8Format::None;
    row.saturated = 10;
    f = tensor_sample_figures(stats_of(row));
    CHECK(f.saturation_ratio == 0.01);
    CHECK_FALSE(f.underflow_ratio);
    CHECK(f.headroom_bits == 2.0);

    // No FP8 format at all (a BF16 GEMM of a reference run): no figure, but NaN/Inf still count.
    row = healthy_sample(1, 0, 0);
    row.target_format = schema::Fp8Format::None;
    row.nans = 2;
    row.infs = 1;
    f = tensor_sample_figures(stats_of(row));
    CHECK_FALSE(f.saturation_ratio);
    CHECK_FALSE(f.underflow_ratio);
    CHECK_FALSE(f.headroom_bits);
    CHECK(f.nonfinite == 3);

    // Headroom needs amax > 0 and a usable scale; ratios need numel > 0.
    row = healthy_sample(1, 0, 0);
    row.amax = 0;
    CHECK_FALSE(tensor_sample_figures(stats_of(row)).headroom_bits);
    row = healthy_sample(1, 0, 0);
    row.scale.reset();
    row.scale_inv = 0.0;
    CHECK_FALSE(tensor_sample_figures(stats_of(row)).headroom_bits);
    row.numel = 0;
    CHECK_FALSE(tensor_sample_figures(stats_of(row)).saturation_ratio);
}

TEST_CASE("site labels: NVTX path, name, GEMM ordinal, role", "[tensor_health]")
{
    TraceModel model;
    model.strings.values
        = { "train_step/layers.3/mlp.fc2", "gemm 4096x1024x4096", "loss_scale", "layers.0.fc1.weight", "" };
    const auto make_site = [](int64_t id, uint32_t name, std::optional<uint32_t> path, int32_t ordinal,
                               schema::TensorRole role, schema::StatsSource source) {
        TensorSite site;
        site.id = id;
        site.name = StringRef { name };
        if (path)
            site.nvtx_path = StringRef { *path };
        site.ordinal = ordinal;
        site.role = static_cast<int32_t>(role);
        site.source = static_cast<int32_t>(source);
        return site;
    };
    using schema::StatsSource;
    using schema::TensorRole;
    const TensorSite gemm = make_site(1, 1, 0, 0, TensorRole::A, StatsSource::GemmInterception);
    CHECK(tensor_site_label(model, gemm) == "train_step/layers.3/mlp.fc2 · gemm 4096x1024x4096 #0 · A");
    const TensorSite probe = make_site(2, 2, std::nullopt, 0, TensorRole::Other, StatsSource::ExplicitProbe);
    CHECK(tensor_site_label(model, probe) == "loss_scale");
    // An empty NVTX path is left out with its separator.
    const TensorSite weight = make_site(3, 3, 4, 0, TensorRole::Weight, StatsSource::Annotate);
    CHECK(tensor_site_label(model, weight) == "layers.0.fc1.weight · weight");
    const TensorSite unnamed = make_site(5, 4, std::nullopt, 2, TensorRole::D, StatsSource::GemmInterception);
    CHECK(tensor_site_label(model, unnamed) == "site 5 #2 · D");
    // A GEMM whose place in the step the collector did not learn (ordinal -1) has no ordinal to show (issue 44).
    const TensorSite unplaced = make_site(7, 1, 0, -1, TensorRole::A, StatsSource::GemmInterception);
    CHECK(tensor_site_label(model, unplaced) == "train_step/layers.3/mlp.fc2 · gemm 4096x1024x4096 · A");
    // Format 1.5: the scale recipe last; a GEMM that PyTorch's _scaled_mm interception measured has its ordinal too.
    TensorSite blockwise = make_site(6, 1, 0, 1, TensorRole::B, StatsSource::TorchScaledMm);
    blockwise.scale_recipe = static_cast<int32_t>(schema::ScaleRecipe::Blockwise1x128);
    CHECK(tensor_site_label(model, blockwise)
        == "train_step/layers.3/mlp.fc2 · gemm 4096x1024x4096 #1 · B · blockwise 1×128");
    blockwise.scale_recipe = 42; // a value of a newer minor version: kept, named by number
    CHECK(
        tensor_site_label(model, blockwise) == "train_step/layers.3/mlp.fc2 · gemm 4096x1024x4096 #1 · B · recipe 42");
    CHECK(scale_recipe_name(static_cast<int32_t>(schema::ScaleRecipe::Tensorwise)) == "tensorwise");
    CHECK(scale_recipe_name(static_cast<int32_t>(schema::ScaleRecipe::Rowwise)) == "rowwise");
    CHECK(scale_recipe_name(static_cast<int32_t>(schema::ScaleRecipe::Blockwise128x128)) == "blockwise 128×128");
    CHECK(scale_recipe_name(static_cast<int32_t>(schema::ScaleRecipe::Mx32)) == "MX 32");
    CHECK(scale_recipe_name(static_cast<int32_t>(schema::ScaleRecipe::Nvfp4x16)) == "NVFP4 16");
}

TEST_CASE("recipe totals: scaled FP8 operands per recipe, samples per step that holds the recipe", "[tensor_health]")
{
    Scenario s;
    const auto gemm_site = [&](const char* name, schema::TensorRole role, std::optional<schema::ScaleRecipe> recipe,
                               schema::Dtype dtype = schema::Dtype::E4M3) {
        const int64_t id = s.tensor_site(name, role, dtype, 128, 256, schema::StatsSource::GemmInterception, "fwd");
        if (recipe)
            s.site_recipe(id, *recipe);
        return id;
    };
    const int64_t a1 = gemm_site("g1", schema::TensorRole::A, schema::ScaleRecipe::Blockwise128x128);
    const int64_t b1 = gemm_site("g1", schema::TensorRole::B, schema::ScaleRecipe::Blockwise1x128);
    const int64_t b2 = gemm_site("g2", schema::TensorRole::B, schema::ScaleRecipe::Blockwise1x128);
    const int64_t d1 = gemm_site("g1", schema::TensorRole::D, std::nullopt); // BF16 output: no recipe
    // A BF16 GEMM's operand with its GEMM's default tensorwise scale mode: nothing was scaled, no recipe counts it
    // (issue 44: a compiled BF16 run showed "tensorwise: 111 sites").
    const int64_t bf16
        = gemm_site("g3", schema::TensorRole::A, schema::ScaleRecipe::Tensorwise, schema::Dtype::BFloat16);
    // Steps 3 and 4 (analysed); b2 only in step 4; step 2 is outside the analysed steps.
    for (const auto& [site, step] : { std::pair { a1, 3 }, { a1, 4 }, { b1, 3 }, { b1, 4 }, { b2, 4 }, { d1, 3 },
             { a1, 2 }, { bf16, 3 }, { bf16, 4 } })
        s.tensor_stats(healthy_sample(site, step, step == 2 ? 500 + site : 1000 * (step - 2) + site));
    const TraceModel model = write_and_load(s, "tensor-recipes");
    const TensorHealth h = analyze_tensor_health(model, step_set(StepSource::Nvtx, 3, 2, 1000, 1000));
    REQUIRE(h.totals.recipes.size() == 2);
    CHECK(h.totals.recipes[0].recipe == "blockwise 1×128"); // by enum value: 2 before 3
    CHECK(h.totals.recipes[0].sites == 2);
    CHECK(h.totals.recipes[0].samples == 3);
    CHECK(h.totals.recipes[0].samples_per_sampled_step == 1.5);
    CHECK(h.totals.recipes[1].recipe == "blockwise 128×128");
    CHECK(h.totals.recipes[1].sites == 1);
    CHECK(h.totals.recipes[1].samples == 2);
    CHECK(h.totals.recipes[1].samples_per_sampled_step == 1.0);
    CHECK(site(h, b2).scale_recipe == static_cast<int32_t>(schema::ScaleRecipe::Blockwise1x128));
    CHECK(site(h, b2).label == "fwd · g2 #2 · B · blockwise 1×128"); // the scenario counts same-shaped sites
    CHECK_FALSE(site(h, d1).scale_recipe);
}

TEST_CASE("rankings: worst figure, then mean, then site id, sites without the figure left out", "[tensor_health]")
{
    Scenario s;
    const int64_t a = probe_site(s, "a"), b = probe_site(s, "b");
    const int64_t c = s.tensor_site(
        "c", schema::TensorRole::A, schema::Dtype::E4M3, 10, 100, schema::StatsSource::GemmInterception, "fwd");
    const int64_t d = probe_site(s, "d");
    // Saturated elements (of 1000) and underflows, in steps 3 and 4; c holds FP8 codes (no underflow figure).
    const struct {
        int64_t site;
        int64_t saturated[2];
        int64_t underflows[2];
    } plan[] = { { a, { 10, 0 }, { 50, 0 } }, { b, { 10, 10 }, { 30, 30 } }, { c, { 20, 0 }, { 0, 0 } },
        { d, { 10, 0 }, { 50, 50 } } };
    for (const auto& p : plan)
        for (int i = 0; i < 2; ++i) {
            TensorStatsRow row = healthy_sample(p.site, 3 + i, 1000 + 1000 * i + p.site);
            row.saturated = p.saturated[i];
            row.underflows = p.underflows[i];
            if (p.site == c)
                row.dtype = schema::Dtype::E4M3;
            s.tensor_stats(row);
        }
    const TraceModel model = write_and_load(s, "tensor-rankings");
    const StepSet steps = step_set(StepSource::Nvtx, 3, 2, 1000, 1000);

    const TensorHealth h = analyze_tensor_health(model, steps);
    REQUIRE(h.sites.size() == 4);
    CHECK(site_ids(h, h.top_saturation) == std::vector<int64_t> { c, b, a, d });
    CHECK(site_ids(h, h.top_underflow) == std::vector<int64_t> { d, a, b });
    CHECK(site(h, a).worst_saturation_ratio == 0.01);
    CHECK(site(h, a).mean_saturation_ratio == 0.005);
    CHECK(site(h, a).worst_saturation_step == 3);
    CHECK(site(h, b).worst_saturation_step == 3); // equal in both steps: the earliest
    CHECK(site(h, d).mean_underflow_ratio == 0.05);
    CHECK(site(h, c).underflow_samples == 0);
    CHECK(site(h, c).label == "fwd · c #0 · A");
    CHECK(site(h, a).first_step == 3);
    CHECK(site(h, a).last_step == 4);
    CHECK(site(h, a).amax_min == 1.75);
    // top_n cuts each list.
    const TensorHealth top2 = analyze_tensor_health(model, steps, 2);
    CHECK(site_ids(top2, top2.top_saturation) == std::vector<int64_t> { c, b });
    CHECK(site_ids(top2, top2.top_underflow) == std::vector<int64_t> { d, a });
}

TEST_CASE("least headroom, E4M3 and E5M2, and stale scales (headroom below 0)", "[tensor_health]")
{
    Scenario s;
    const int64_t e4m3 = probe_site(s, "e4m3"), e5m2 = probe_site(s, "e5m2"), stale = probe_site(s, "stale"),
                  unscaled = probe_site(s, "unscaled");
    s.tensor_stats(healthy_sample(e4m3, 5, 1100)); // 448 / 64 / 1.75 = 4: 2 bits
    TensorStatsRow row = healthy_sample(e5m2, 5, 1200);
    row.target_format = schema::Fp8Format::E5M2;
    row.scale = 1.0 / 16; // no scale_inv: 1/scale = 16
    row.scale_inv.reset();
    row.amax = 57344.0 * 16 / 8; // 3 bits
    s.tensor_stats(row);
    row = healthy_sample(stale, 5, 1300);
    row.amax = 14; // the scale covers 7: -1 bit, the cast clips
    s.tensor_stats(row);
    s.tensor_stats(healthy_sample(stale, 6, 2300)); // 2 bits again
    row = healthy_sample(unscaled, 5, 1400);
    row.scale.reset();
    row.scale_inv.reset();
    s.tensor_stats(row);
    const TensorHealth h
        = analyze_tensor_health(write_and_load(s, "tensor-headroom"), step_set(StepSource::Nvtx, 5, 2, 1000, 1000));

    CHECK(site_ids(h, h.top_least_headroom) == std::vector<int64_t> { stale, e4m3, e5m2 });
    CHECK(site(h, stale).min_headroom_bits == -1.0);
    CHECK(site(h, stale).min_headroom_step == 5);
    CHECK(site(h, e4m3).min_headroom_bits == 2.0);
    CHECK(site(h, e5m2).min_headroom_bits == 3.0);
    CHECK_FALSE(site(h, unscaled).min_headroom_bits);
    REQUIRE(h.stale_scale.total == 1);
    CHECK(h.stale_scale.first[0].where.site_id == stale);
    CHECK(h.stale_scale.first[0].where.step == 5);
    CHECK(h.stale_scale.first[0].value == -1.0);
    CHECK(h.stale_scale.first[0].where.site_label == "stale");
}

TEST_CASE("a scale chosen for exactly this amax is not stale (float rounding of 0 bits)", "[tensor_health]")
{
    TensorStatsRow row = healthy_sample(1, 0, 0);
    row.scale = 179.2f;
    row.scale_inv = 1.0f / 179.2f;
    row.amax = 2.5f; // 448 / 179.2 = 2.5, up to float rounding
    const auto headroom = tensor_sample_figures(stats_of(row)).headroom_bits;
    REQUIRE(headroom);
    CHECK_THAT(*headroom, WithinAbs(0.0, 1e-6));
    CHECK(*headroom >= kStaleScaleHeadroomBits);
}
