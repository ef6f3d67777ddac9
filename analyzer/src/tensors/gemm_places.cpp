// Zero-code GEMM sites are named by shape ("gemm 512x2048x512 #8 · B"); this says where such a site sits in the step.
//
// The step: the analysed step with the most distinct GEMMs sampled (the earliest of equals), so that a step whose
// statistics were capped or cut by a window does not set the count. A GEMM is one cuBLASLt call: its A, B and D
// sites share name, NVTX path and ordinal. Its time is its earliest sample's, taken on the host in the GEMM hook
// inside the job's cublasLtMatmul call; its thread is that of the last CUDA API call that ended before then (the
// job's own launches that prepared the GEMM, a cast or a scale, made by the same thread while the other is waiting;
// the collector's own calls were moved out of the API table; the GEMM's own launch is a driver call, not always
// recorded).
// PyTorch runs the backward pass of CUDA work on autograd's device thread, so with GEMMs from two or more threads in
// the step, those of the thread that launched the step's first GEMM are the forward pass and the others the backward
// pass; with one thread (JAX, a hand-written backward, a CUDA graph) the phase is not known and the place is counted
// over the whole step.
#include "tensors/tensor_health_parts.hpp"

#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace fp8scope::analyzer::detail {
namespace {

using GemmKey = std::tuple<uint32_t, int64_t, int32_t>; // name, NVTX path (-1: none), ordinal

GemmKey key_of(const TensorSite& site)
{
    return { site.name.index, site.nvtx_path ? static_cast<int64_t>(site.nvtx_path->index) : -1, site.ordinal };
}

// Time and launching thread of one GEMM in the chosen step.
struct Gemm {
    int64_t first_ns = 0;
    int64_t tid = 0; // 0: no API call found after it
    std::vector<int64_t> site_ids;
};

} // namespace

std::unordered_map<int64_t, GemmSitePlace> gemm_site_places(
    const TraceModel& model, const std::vector<std::optional<int64_t>>& analysed)
{
    std::unordered_map<int64_t, const TensorSite*> site_of;
    for (const TensorSite& site : model.tensor_sites)
        if (static_cast<schema::StatsSource>(site.source) == schema::StatsSource::GemmInterception)
            site_of.emplace(site.id, &site);
    if (site_of.empty())
        return {};

    // The step with the most distinct GEMMs sampled.
    std::set<std::pair<int64_t, GemmKey>> step_gemms;
    for (size_t i = 0; i < model.tensor_stats.size(); ++i)
        if (const auto it = site_of.find(model.tensor_stats[i].site_id); it != site_of.end() && analysed[i])
            step_gemms.emplace(*analysed[i], key_of(*it->second));
    std::optional<int64_t> chosen;
    size_t most = 0;
    for (auto at = step_gemms.begin(); at != step_gemms.end();) {
        const int64_t step = at->first;
        size_t count = 0;
        for (; at != step_gemms.end() && at->first == step; ++at)
            ++count;
        if (count > most) {
            most = count;
            chosen = step;
        }
    }
    if (!chosen)
        return {};

    std::map<GemmKey, Gemm> gemms;
    for (size_t i = 0; i < model.tensor_stats.size(); ++i) {
        const TensorStats& s = model.tensor_stats[i];
        const auto it = site_of.find(s.site_id);
        if (it == site_of.end() || analysed[i] != chosen)
            continue;
        auto [at, added] = gemms.try_emplace(key_of(*it->second), Gemm { s.timestamp_ns, 0, {} });
        at->second.first_ns = std::min(at->second.first_ns, s.timestamp_ns);
        if (std::ranges::find(at->second.site_ids, s.site_id) == at->second.site_ids.end())
            at->second.site_ids.push_back(s.site_id);
    }
    std::vector<Gemm*> in_order;
    for (auto& [key, gemm] : gemms)
        in_order.push_back(&gemm);
    std::ranges::stable_sort(in_order, {}, &Gemm::first_ns);

    // The API calls that ended from a second before the step's first GEMM to its last, by end: each GEMM's thread
    // is that of the last call that ended at or before its time.
    constexpr int64_t kLookBackNs = 1'000'000'000;
    const int64_t from = in_order.front()->first_ns - kLookBackNs, to = in_order.back()->first_ns;
    const ApiTable& api = model.api_calls;
    std::vector<std::pair<int64_t, int64_t>> calls; // end, thread
    for (size_t c = 0; c < api.end_ns.size(); ++c)
        if (api.end_ns[c] >= from && api.end_ns[c] <= to)
            calls.emplace_back(api.end_ns[c], api.global_tid[c]);
    std::ranges::sort(calls);
    std::set<int64_t> threads;
    for (Gemm* gemm : in_order) {
        const auto after = std::ranges::upper_bound(calls, std::pair { gemm->first_ns, INT64_MAX });
        gemm->tid = after != calls.begin() ? std::prev(after)->second : 0;
        if (gemm->tid != 0)
            threads.insert(gemm->tid);
    }
    const bool phases = threads.size() >= 2 && in_order.front()->tid != 0;
    const int64_t forward_tid = in_order.front()->tid;
    const auto phase_of = [&](const Gemm& gemm) {
        if (!phases || gemm.tid == 0)
            return GemmPhase::Unknown;
        return gemm.tid == forward_tid ? GemmPhase::Forward : GemmPhase::Backward;
    };

    std::map<GemmPhase, int64_t> totals;
    for (const Gemm* gemm : in_order)
        ++totals[phase_of(*gemm)];
    std::map<GemmPhase, int64_t> seen;
    std::unordered_map<int64_t, GemmSitePlace> places;
    for (const Gemm* gemm : in_order) {
        const GemmPhase phase = phase_of(*gemm);
        const GemmSitePlace place { .step = *chosen, .phase = phase, .position = ++seen[phase], .of = totals[phase] };
        for (const int64_t site_id : gemm->site_ids)
            places.emplace(site_id, place);
    }
    return places;
}

} // namespace fp8scope::analyzer::detail
