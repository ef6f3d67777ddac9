// Per-sample tensor figures and site labels (docs/analysis.md "Tensor health"). Kept apart from the per-site
// aggregation so that the GUI's per-step plots can derive the same figures from single samples.
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fp8scope::analyzer {
namespace {

namespace schema = fp8scope::schema;

double ratio(int64_t count, int64_t numel)
{
    return static_cast<double>(count) / static_cast<double>(numel);
}

bool positive_finite(double value)
{
    return std::isfinite(value) && value > 0;
}

} // namespace

bool is_high_precision(int32_t dtype)
{
    const auto d = static_cast<schema::Dtype>(dtype);
    return d == schema::Dtype::Float32 || d == schema::Dtype::BFloat16 || d == schema::Dtype::Float16;
}

double min_subnormal_log2(double fp8_max)
{
    return fp8_max == kE5M2Max ? kE5M2MinSubnormalLog2 : kE4M3MinSubnormalLog2;
}

HistogramShares shares_under_scale(
    const std::vector<uint64_t>& histogram, int32_t first_exponent, double scale_inv, double fp8_max)
{
    const double shift = -std::log2(scale_inv);
    const double top = std::log2(fp8_max);
    const double bottom = min_subnormal_log2(fp8_max) - 1;
    double total = 0, over = 0, under = 0;
    for (size_t i = 0; i < histogram.size(); ++i) {
        const auto count = static_cast<double>(histogram[i]);
        const double lo = static_cast<double>(first_exponent) + static_cast<double>(i) + shift;
        total += count;
        over += count * std::clamp(lo + 1 - top, 0.0, 1.0);
        under += count * std::clamp(bottom - lo, 0.0, 1.0);
    }
    if (total <= 0)
        return {};
    return { over / total, under / total };
}

// scale_inv as recorded, else 1/scale: cuBLASLt's *_SCALE_POINTER holds scale_inv, probes may know only scale.
std::optional<double> tensor_scale_inv(const TensorStats& sample)
{
    if (sample.scale_inv && positive_finite(*sample.scale_inv))
        return *sample.scale_inv;
    if (sample.scale && positive_finite(*sample.scale))
        return 1.0 / *sample.scale;
    return std::nullopt;
}

std::optional<double> fp8_max_of(const TensorStats& sample)
{
    switch (static_cast<schema::Fp8Format>(sample.target_format)) {
    case schema::Fp8Format::E4M3:
        return kE4M3Max;
    case schema::Fp8Format::E5M2:
        return kE5M2Max;
    case schema::Fp8Format::None:
        break;
    }
    // FP8 codes seen at a GEMM are already in their format, whatever the target column says.
    switch (static_cast<schema::Dtype>(sample.dtype)) {
    case schema::Dtype::E4M3:
        return kE4M3Max;
    case schema::Dtype::E5M2:
        return kE5M2Max;
    default:
        return std::nullopt;
    }
}

TensorSampleFigures tensor_sample_figures(const TensorStats& sample)
{
    TensorSampleFigures figures;
    figures.nonfinite = sample.nans + sample.infs;
    figures.nan_scale
        = (sample.scale && std::isnan(*sample.scale)) || (sample.scale_inv && std::isnan(*sample.scale_inv));
    const std::optional<double> fp8_max = fp8_max_of(sample);
    if (!fp8_max)
        return figures;
    if (sample.numel > 0) {
        // The probes count `saturated` (rounds to >= max, or |code| == max) and `overflows` (|x| > max·scale_inv,
        // TE's definition, 0 for FP8 codes); the larger is what the cast clipped.
        figures.saturation_ratio = ratio(std::max(sample.saturated, sample.overflows), sample.numel);
        if (is_high_precision(sample.dtype))
            figures.underflow_ratio = ratio(sample.underflows, sample.numel);
    }
    if (const auto scale_inv = tensor_scale_inv(sample); scale_inv && positive_finite(sample.amax))
        figures.headroom_bits = std::log2(*fp8_max * *scale_inv / sample.amax);
    return figures;
}

std::string_view tensor_role_word(int32_t role)
{
    switch (static_cast<schema::TensorRole>(role)) {
    case schema::TensorRole::A:
        return "A";
    case schema::TensorRole::B:
        return "B";
    case schema::TensorRole::D:
        return "D";
    case schema::TensorRole::Input:
        return "input";
    case schema::TensorRole::Weight:
        return "weight";
    case schema::TensorRole::Output:
        return "output";
    case schema::TensorRole::Gradient:
        return "gradient";
    case schema::TensorRole::Other:
        return "";
    }
    return "";
}

std::string scale_recipe_name(int32_t recipe)
{
    switch (static_cast<schema::ScaleRecipe>(recipe)) {
    case schema::ScaleRecipe::Tensorwise:
        return "tensorwise";
    case schema::ScaleRecipe::Rowwise:
        return "rowwise";
    case schema::ScaleRecipe::Blockwise1x128:
        return "blockwise 1×128";
    case schema::ScaleRecipe::Blockwise128x128:
        return "blockwise 128×128";
    case schema::ScaleRecipe::Mx32:
        return "MX 32";
    case schema::ScaleRecipe::Nvfp4x16:
        return "NVFP4 16";
    }
    return fmt::format("recipe {}", recipe);
}

bool is_per_block_recipe(std::optional<int32_t> recipe)
{
    return recipe && *recipe != static_cast<int32_t>(schema::ScaleRecipe::Tensorwise);
}

std::string tensor_site_label(const TraceModel& model, const TensorSite& site)
{
    const auto text
        = [&](StringRef ref) { return ref.index < model.strings.size() ? model.strings[ref] : std::string_view {}; };
    std::string label;
    if (site.nvtx_path && !text(*site.nvtx_path).empty())
        label = fmt::format("{} · ", text(*site.nvtx_path));
    const std::string_view name = text(site.name);
    label += name.empty() ? fmt::format("site {}", site.id) : std::string(name);
    // The ordinal tells apart same-shaped GEMMs under one NVTX path; probes have unique names instead. A GEMM whose
    // place in the step was not learned (ordinal -1: the collector saw it outside its learned period) has none to say.
    if (const auto source = static_cast<schema::StatsSource>(site.source);
        (source == schema::StatsSource::GemmInterception || source == schema::StatsSource::TorchScaledMm)
        && site.ordinal >= 0)
        label += fmt::format(" #{}", site.ordinal);
    // A probe named after its role ("input", probed as an input) says it once.
    if (const std::string_view role = tensor_role_word(site.role); !role.empty() && role != name)
        label += fmt::format(" · {}", role);
    if (site.scale_recipe)
        label += fmt::format(" · {}", scale_recipe_name(*site.scale_recipe));
    return label;
}

} // namespace fp8scope::analyzer
