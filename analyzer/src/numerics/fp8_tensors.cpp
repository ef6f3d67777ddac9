// Which sites hold one FP8 tensor (docs/analysis.md "Numerics verdict", One tensor, many readers).
#include "numerics/fp8_tensors.hpp"

#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace fp8scope::analyzer {
namespace detail {
namespace {

bool is_fp8_dtype(int32_t dtype)
{
    const auto d = static_cast<schema::Dtype>(dtype);
    return d == schema::Dtype::E4M3 || d == schema::Dtype::E5M2;
}

// One step's sample as the tensor's identity: what two readers of the same codes see alike (with their per-block
// statistics, which a per-tensor sample leaves out).
using StepKey = std::tuple<int64_t, int32_t, int64_t, double, double, int64_t, int32_t, std::vector<uint64_t>,
    std::vector<double>>;

// Where a reader sits: the last two parts of its NVTX path with the backward ranges' suffix dropped
// ("blocks.1/blocks.1.fc1" for "train_step/Transformer/blocks.1/blocks.1.fc1" and for
// "blocks.1.backward/blocks.1.fc1.backward"): a forward GEMM and the backward GEMM that reuses its input agree, and
// two layers' alike tensors do not.
std::string place_of(std::string_view path)
{
    constexpr std::string_view kBackward = ".backward";
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t slash = std::min(path.find('/', start), path.size());
        std::string_view part = path.substr(start, slash - start);
        if (part.ends_with(kBackward))
            part.remove_suffix(kBackward.size());
        parts.push_back(part);
        start = slash + 1;
    }
    if (parts.size() < 2)
        return std::string(parts.empty() ? std::string_view {} : parts.back());
    return fmt::format("{}/{}", parts[parts.size() - 2], parts.back());
}

std::pair<std::string, std::vector<StepKey>> identity_of(
    std::string place, const std::map<int64_t, StepSample>& by_step)
{
    std::vector<StepKey> key;
    key.reserve(by_step.size());
    for (const auto& [step, s] : by_step) {
        std::vector<double> blocks;
        if (s.blocks)
            blocks = { s.blocks->amax, s.blocks->p50, s.blocks->p99, static_cast<double>(s.blocks->blocks),
                static_cast<double>(s.blocks->saturating), static_cast<double>(s.blocks->subnormal) };
        key.emplace_back(step, s.dtype, s.numel, s.amax, s.scale_inv.value_or(0.0), s.saturated, s.hist_first_exponent,
            s.histogram, std::move(blocks));
    }
    return { std::move(place), std::move(key) };
}

} // namespace

std::vector<Fp8Tensor> group_fp8_tensors(const TraceModel& model, const SiteSamples& samples)
{
    std::unordered_map<int64_t, const TensorSite*> sites;
    for (const TensorSite& site : model.tensor_sites)
        sites.emplace(site.id, &site);
    // Codes by identity, in site order (SiteSamples is ordered by site id).
    std::map<std::pair<std::string, std::vector<StepKey>>, std::vector<int64_t>> by_identity;
    std::vector<const std::vector<int64_t>*> order;
    for (const auto& [site_id, by_step] : samples) {
        if (by_step.empty() || !is_fp8_dtype(by_step.begin()->second.dtype) || !sites.contains(site_id))
            continue;
        auto [it, fresh]
            = by_identity.try_emplace(identity_of(place_of(text_of(model, sites.at(site_id)->nvtx_path)), by_step));
        it->second.push_back(site_id);
        if (fresh)
            order.push_back(&it->second);
    }
    const LogicalRoles roles(model, samples);
    std::vector<Fp8Tensor> tensors;
    std::map<int64_t, size_t> by_probe;
    for (const std::vector<int64_t>* codes : order) {
        const std::optional<int64_t> probe = roles.twin(*sites.at(codes->front()));
        if (probe) {
            if (const auto found = by_probe.find(*probe); found != by_probe.end()) {
                auto& merged = tensors[found->second].code_sites;
                merged.insert(merged.end(), codes->begin(), codes->end());
                std::ranges::sort(merged);
                continue;
            }
            by_probe.emplace(*probe, tensors.size());
        }
        tensors.push_back({ .probe_site = probe, .code_sites = *codes });
    }
    // Probes of a cast whose codes were not sampled (no GEMM interception, another library's GEMM).
    for (const auto& [site_id, by_step] : samples) {
        const auto site = sites.find(site_id);
        if (by_step.empty() || site == sites.end() || by_probe.contains(site_id))
            continue;
        const StepSample& first = by_step.begin()->second;
        const auto source = static_cast<schema::StatsSource>(site->second->source);
        const bool probe = source == schema::StatsSource::ExplicitProbe || source == schema::StatsSource::Annotate;
        if (probe && is_high_precision(first.dtype) && first.target_format != 0)
            tensors.push_back({ .probe_site = site_id, .code_sites = {} });
    }
    std::ranges::sort(tensors, {}, &Fp8Tensor::name_site);
    return tensors;
}

} // namespace detail

std::vector<Fp8Tensor> find_fp8_tensors(const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device)
{
    return detail::group_fp8_tensors(model, detail::collect_site_samples(model, steps, device));
}

} // namespace fp8scope::analyzer
