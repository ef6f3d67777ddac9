// The parts of compare (compare.hpp) that its files share: site matching and per-step figures (compare_sites.cpp),
// the recipe and logical roles (site_recipe.cpp), the change-point test (compare_drift.cpp), the performance
// (compare_performance.cpp), what differs between the pair (compare_identity.cpp), and the assembly (compare.cpp).
#pragma once

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "numerics/change_point.hpp"
#include "tensors/logical_roles.hpp"
#include "tensors/site_samples.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace fp8scope::analyzer::detail {

struct SiteMatching {
    struct Pair {
        int64_t run_site = 0, ref_site = 0;
        std::string role; // normalised
        bool swapped = false, ambiguous = false;
    };
    std::vector<Pair> pairs; // by run site id
    std::vector<UnmatchedSite> run_unmatched, ref_unmatched;
};
SiteMatching match_sites(
    const TraceModel& run, const SiteSamples& run_samples, const TraceModel& ref, const SiteSamples& ref_samples);

// Per-step figures of one matched pair over the common steps where both have a sample (CompareSite::steps), the
// early-step baselines and the one-step events.
void fill_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref);

// The same for a site scaled per row or block: the amax ratio from its per-block statistics (the dequantized amax),
// the spread of its block amaxes and its share of blocks with subnormal codes, and the codes' own dynamic range
// (each block's codes span its own range, so the codes' median tells how far below its block's max the bulk sits).
// No saturation, headroom or figure of the reference under the run's scale: there is no one scale.
void fill_block_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref);

// The run's scaling recipe for one site, from its samples' scale_inv and amax, and from its twin's when it has one:
// the probe of the high-precision tensor that was cast with the same scale (LogicalRoles::twin).
// Adds the site's recipe to the result's recipe line: its decided recipe, its scale recipe, an unscaled GEMM.
void count_recipe(const CompareSite& site, CompareResult& result);

void decide_recipe(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>* twin);

// GEMMs given unit scales while their FP8 codes come from a scale applied outside the GEMM (torchao's rowwise
// backward multiplies the row scales into the output itself; docs/analysis.md "Compare", Scales outside the GEMM):
// GEMM sites (interception) with an FP8 operand whose every sample has scale_inv exactly 1 and whose codes reach the
// format's max in at least kCurrentScalingShare of them, as a scale made from the tensor's own amax puts them. Keyed
// by the site's name, NVTX path and ordinal, so that the GEMM's D (an output not yet scaled) is known too.
using GemmKey = std::tuple<uint32_t, uint32_t, int32_t>; // name, NVTX path (or max), ordinal
std::set<GemmKey> unit_scale_gemms(const TraceModel& model, const SiteSamples& samples);
GemmKey gemm_key(const TensorSite& site);

// Runs change_point over a site's series and fills site.drift and site.onset_step.
void detect_drift(CompareSite& site);

// Both runs' performance (compare_performance.hpp), each over the given step indices of its report.
PerformanceComparison compare_performance(
    const CompareInput& input, const std::set<int64_t>& run_steps, const std::set<int64_t>& ref_steps);

// The program a command line runs: the script after an interpreter ("python -u train.py" -> "train.py"), the module
// after -m, else the executable; its base name. Empty when the command line is unknown. (compare_identity.cpp)
std::string program_of(std::string_view command_line);

// The pair's identity (compare.hpp PairIdentity) from the traces, their performance and their sites' samples over
// each trace's analysed steps; sites_in_common is left to compare_runs(), which knows whether it matched the sites
// already. (compare_identity.cpp)
PairIdentity identify_pair(const CompareInput& in, const PerformanceComparison& performance,
    const SiteSamples& run_samples, const SiteSamples& ref_samples, bool swapped);

} // namespace fp8scope::analyzer::detail
