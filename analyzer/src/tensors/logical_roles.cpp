#include "tensors/logical_roles.hpp"

#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <cmath>

namespace fp8scope::analyzer::detail {

namespace schema = fp8scope::schema;

LogicalRoles::LogicalRoles(const TraceModel& model, const SiteSamples& samples)
    : model_(model)
    , samples_(samples)
{
    for (const TensorSite& site : model.tensor_sites) {
        if (static_cast<schema::StatsSource>(site.source) == schema::StatsSource::GemmInterception)
            continue;
        const auto role = static_cast<schema::TensorRole>(site.role);
        const char* word = role == schema::TensorRole::Input ? "activation"
            : role == schema::TensorRole::Weight             ? "weight"
            : role == schema::TensorRole::Gradient           ? "gradient"
                                                             : nullptr;
        const auto found = samples.find(site.id);
        if (!word || found == samples.end())
            continue;
        const std::string module = module_of(text_of(model, site.nvtx_path));
        for (const auto& [step, s] : found->second)
            if (s.scale_inv)
                probes_[{ step, module }].push_back({ *s.scale_inv, word, site.id });
    }
}

std::optional<std::string> LogicalRoles::of(const TensorSite& site) const
{
    const auto role = static_cast<schema::TensorRole>(site.role);
    switch (role) {
    case schema::TensorRole::Input:
        return "activation";
    case schema::TensorRole::Weight:
        return "weight";
    case schema::TensorRole::Gradient:
        return "gradient";
    case schema::TensorRole::D:
    case schema::TensorRole::Output:
        return "output";
    case schema::TensorRole::A:
    case schema::TensorRole::B:
        break;
    case schema::TensorRole::Other:
        return std::nullopt;
    }
    if (static_cast<schema::Dtype>(site.dtype) == schema::Dtype::E5M2)
        return "gradient";
    if (const auto probe = twin(site)) {
        const auto it = std::ranges::find(model_.tensor_sites, *probe, &TensorSite::id);
        if (it != model_.tensor_sites.end())
            return of(*it);
    }
    return std::nullopt;
}

std::optional<int64_t> LogicalRoles::twin(const TensorSite& site) const
{
    const auto role = static_cast<schema::TensorRole>(site.role);
    if (role != schema::TensorRole::A && role != schema::TensorRole::B)
        return std::nullopt;
    const auto found = samples_.find(site.id);
    if (found == samples_.end())
        return std::nullopt;
    const std::string module = module_of(text_of(model_, site.nvtx_path));
    std::map<int64_t, int> votes;
    int steps = 0;
    for (const auto& [step, s] : found->second) {
        if (!s.scale_inv)
            continue;
        ++steps;
        const auto probes = probes_.find({ step, module });
        if (probes == probes_.end())
            continue;
        for (const ProbeScale& p : probes->second)
            if (std::abs(p.scale_inv - *s.scale_inv) <= 1e-6 * std::abs(p.scale_inv))
                ++votes[p.site_id];
    }
    // The probe the scales name in more than half of the steps: at step 0 every scale is 1 and names them all.
    for (const auto& [probe, n] : votes)
        if (2 * n > steps)
            return probe;
    return std::nullopt;
}

} // namespace fp8scope::analyzer::detail
