// Tensor health in words, for every format of `fp8scope report` and for the viewer (docs/analysis.md "Tensor
// health"): which sites are listed and in what order, how a figure is written, the thresholds, the events. Site
// labels come from the trace's NVTX names, so every sentence that holds one takes the format's escape.
#pragma once

#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::present {

// Makes untrusted trace text safe for one output format: printable(), xml_escaped(), markdown_escaped().
using Escape = std::string (*)(std::string_view);

// The order of the site listings, most in need of attention first: worst saturation, then worst underflow
// (descending), then minimum headroom (ascending; sites without a headroom figure after those with one), then site
// id. Indices into health.sites.
std::vector<size_t> sites_by_attention(const analyzer::TensorHealth& health);

// "FP8 max E4M3 448, E5M2 57344; stale scale: headroom below -1e-06 bits; scale = FLT_MAX: scale >= 3.4028e+38".
std::string tensor_thresholds_sentence();
// "603 samples of 201 sites; 540 samples of 180 sites in the 27 analysed steps (20.0 per step)".
std::string tensor_totals_sentence(const analyzer::TensorHealth& health);

// The scaled FP8 operands by recipe, "" when no site has one (format 1.5): "rowwise: 8 sites, 96 samples (16.0 per
// step with samples); blockwise 1×128: 4 sites, ...".
std::string recipes_sentence(const analyzer::TensorHealth& health);
// A site's per-block figures: "largest block amax 2^5.1 the median (p99 2^1.2); 0.8% of blocks saturating, 3% with
// subnormal codes; scales span 12.0 bits; one scale per tensor would flush ~4.1%".
std::string block_figures_text(const analyzer::BlockSiteHealth& blocks);

// How to name zero-code GEMM sites by module, when some have no NVTX path; "" otherwise
// (docs/analysis.md "Tensor health").
std::string unnamed_sites_sentence(const analyzer::TensorHealth& health);

// Figures: a fraction with three significant digits ("0.0123", "0"); headroom in bits ("-9.97 bits", "-" when
// none); an amax range ("0.00123..4.5", "-" when no finite amax); a step ("step 12", "no step").
std::string fraction_text(double ratio);
std::string headroom_text(std::optional<double> bits);
std::string amax_range_text(const analyzer::TensorSiteHealth& site);
std::string step_text(std::optional<int64_t> step);
// A site's worst figure and its step, "0.0123 (step 12)"; "-" when no sample of the site can show it.
std::string worst_saturation_text(const analyzer::TensorSiteHealth& site);
std::string worst_underflow_text(const analyzer::TensorSiteHealth& site);
std::string min_headroom_text(const analyzer::TensorSiteHealth& site);

// "none" or "step 12: 3 NaN, 0 Inf in 4096 elements of LABEL (17 samples with NaN/Inf)".
std::string first_nonfinite_text(const analyzer::TensorHealth& health, Escape escape);
// An event list: "none" or "3 samples; first at step 12 in LABEL (headroom -9.97 bits)".
enum class TensorEventKind { FltMaxScale, ZeroAmax, StaleScale };
std::string tensor_event_text(const analyzer::TensorHealth& health, TensorEventKind kind, Escape escape);
const analyzer::TensorEventList& tensor_events(const analyzer::TensorHealth& health, TensorEventKind kind);
inline constexpr TensorEventKind kTensorEventKinds[]
    = { TensorEventKind::FltMaxScale, TensorEventKind::ZeroAmax, TensorEventKind::StaleScale };
const char* tensor_event_title(TensorEventKind kind); // "scale = FLT_MAX", "amax = 0", "stale scale"

} // namespace fp8scope::present
