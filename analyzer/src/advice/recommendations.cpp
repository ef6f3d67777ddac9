#include "fp8scope/analyzer/advice/recommendations.hpp"

#include "model/median.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fp8scope::analyzer {
namespace {

double share_of(int64_t part, int64_t whole)
{
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::optional<RecommendationStep> worst_cause_step(const Report& report, BubbleCause cause)
{
    std::optional<RecommendationStep> worst;
    for (const StepBubbleTotals& s : bubbles_per_step(report)) {
        const double share = share_of(s.totals.cause_ns[static_cast<size_t>(cause)], s.totals.step_ns);
        if (!worst || share > worst->share)
            worst = RecommendationStep { s.step_index, share };
    }
    return worst;
}

// Kernel classes sum the kernels of every device with activity, and kernels on concurrent streams can together run
// longer than the step: the kernel figure is per device and capped at the step, so that no share exceeds 1.
int64_t kernel_devices(const Report& report)
{
    return std::max<int64_t>(1, static_cast<int64_t>(report.bubbles.devices.size()));
}

std::optional<RecommendationStep> worst_bookkeeping_step(const Report& report)
{
    std::optional<RecommendationStep> worst;
    for (const StepKernelClasses& s : report.kernel_classes.steps) {
        const int64_t bookkeeping_ns = s.by_class[static_cast<size_t>(KernelClass::Cast)].time_ns
            + s.by_class[static_cast<size_t>(KernelClass::AmaxScale)].time_ns;
        const double share = std::min(1.0, share_of(bookkeeping_ns / kernel_devices(report), s.step_ns));
        if (!worst || share > worst->share)
            worst = RecommendationStep { s.step_index, share };
    }
    return worst;
}

std::string percent(double share)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100.0 * share);
    return text;
}

} // namespace

const char* recommendation_kind_name(RecommendationKind kind)
{
    switch (kind) {
    case RecommendationKind::CudaGraphs:
        return "cuda_graphs";
    case RecommendationKind::RemoveSync:
        return "remove_sync";
    case RecommendationKind::FuseFp8Bookkeeping:
        return "fuse_fp8_bookkeeping";
    case RecommendationKind::ReduceHostWork:
        return "reduce_host_work";
    }
    return "unknown";
}

const char* recommendation_figure(RecommendationKind kind)
{
    switch (kind) {
    case RecommendationKind::CudaGraphs:
        return "idle caused by launch";
    case RecommendationKind::RemoveSync:
        return "idle caused by sync";
    case RecommendationKind::FuseFp8Bookkeeping:
        return "cast and amax/scale kernel time";
    case RecommendationKind::ReduceHostWork:
        return "idle caused by host";
    }
    return "unknown";
}

std::optional<BubbleCause> recommendation_cause(RecommendationKind kind)
{
    switch (kind) {
    case RecommendationKind::CudaGraphs:
        return BubbleCause::Launch;
    case RecommendationKind::RemoveSync:
        return BubbleCause::Sync;
    case RecommendationKind::ReduceHostWork:
        return BubbleCause::Host;
    case RecommendationKind::FuseFp8Bookkeeping:
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<RecommendationStep> recommendation_worst_step(const Report& report, RecommendationKind kind)
{
    if (report.steps.steps.empty())
        return std::nullopt;
    if (const std::optional<BubbleCause> cause = recommendation_cause(kind))
        return worst_cause_step(report, *cause);
    return worst_bookkeeping_step(report);
}

namespace {

// The CUDA Graphs estimate of one step on one device (WhatIf::without_launch_overhead_ns).
int64_t graph_step_ns(const DeviceStepBubbles& row)
{
    const BubbleTotals& t = row.totals;
    // Host idle inside the step's launches is framework work in the captured region: the replay removes it with the
    // launch gaps (docs/analysis.md "What-if estimates"). Host idle before the first launch or after the last stays.
    const int64_t host_ns = t.cause_ns[static_cast<size_t>(BubbleCause::Host)] - t.host_in_launches_ns;
    const int64_t sync_ns = t.cause_ns[static_cast<size_t>(BubbleCause::Sync)];
    // After a sync returns, the framework's dispatch up to the next launch is one replay launch in a graph.
    const int64_t serial_ns = t.step_ns - t.graph_removable_ns - t.host_in_launches_ns - t.sync_after_return_ns;
    if (sync_ns > 0)
        return serial_ns;
    return std::max(host_ns, serial_ns - host_ns);
}

// The median over steps (and devices): a stall that hits a few steps (a garbage collection, the host thread
// descheduled) is inside the captured step and goes with the graph; the loader's stall that every step has stays.
int64_t graph_step_estimate_ns(const Report& report)
{
    std::vector<int64_t> estimates;
    for (const DeviceStepBubbles& row : report.bubbles.per_device_step)
        if (!report.device || row.device_id == *report.device)
            estimates.push_back(graph_step_ns(row));
    return estimates.empty() ? 0 : detail::median_of(std::move(estimates));
}

} // namespace

WhatIf estimate_what_if(const Report& report)
{
    WhatIf w;
    const auto steps = static_cast<int64_t>(report.steps.steps.size());
    const BubbleTotals& t = report.totals;
    const size_t devices = std::max<size_t>(1, report.device ? 1 : report.bubbles.per_device.size());
    if (steps == 0 || t.step_ns <= 0)
        return w;
    // Totals sum each device's step time; per device and step is what a user compares with a step.
    const auto per_step = [&](int64_t ns) { return ns / steps / static_cast<int64_t>(devices); };
    w.mean_step_ns = per_step(t.step_ns);
    const int64_t launch_ns = per_step(t.cause_ns[static_cast<size_t>(BubbleCause::Launch)]);
    const int64_t sync_ns = per_step(t.cause_ns[static_cast<size_t>(BubbleCause::Sync)]);
    const int64_t host_in_launches_ns = per_step(t.host_in_launches_ns);
    const int64_t host_ns = per_step(t.cause_ns[static_cast<size_t>(BubbleCause::Host)]) - host_in_launches_ns;
    // What a replay gives back, part by part (graph_step_ns): the launch gaps less the graph's own, the framework's
    // host work between the step's launches, the dispatch after a sync returned, and, in a step without syncs, the
    // host work outside the launches, which a replay overlaps with the GPU's work (max(H, serial - H)). The estimate is
    // a median over steps and the parts are means, so the last part is what the estimate saves beyond the others: the
    // reason names parts that add up to at least the saving (docs/analysis.md "What-if estimates").
    w.without_launch_overhead_ns = graph_step_estimate_ns(report);
    const int64_t graph_saving_ns = std::max<int64_t>(0, w.mean_step_ns - w.without_launch_overhead_ns);
    w.without_syncs_ns = w.mean_step_ns - sync_ns;
    const int64_t removable_ns = per_step(t.graph_removable_ns);
    const int64_t after_sync_ns = per_step(t.sync_after_return_ns);
    const int64_t overlap_ns
        = std::max<int64_t>(0, graph_saving_ns - removable_ns - host_in_launches_ns - after_sync_ns);

    auto add = [&](RecommendationKind kind, std::string title, std::string reason, int64_t saving_ns) {
        const double share = static_cast<double>(saving_ns) / static_cast<double>(w.mean_step_ns);
        if (share >= kMinRecommendationSavingShare)
            w.recommendations.push_back({ kind, std::move(title), std::move(reason), saving_ns, share,
                recommendation_worst_step(report, kind) });
    };
    const auto of_step
        = [&](int64_t ns) { return percent(static_cast<double>(ns) / static_cast<double>(w.mean_step_ns)); };
    // Parts under 0.05% of a step would print as 0.0%: left out.
    const auto shows = [&](int64_t ns) { return ns * 2000 >= w.mean_step_ns; };
    std::string graph_reason = "the GPU waited for kernel launches for " + of_step(launch_ns) + " of each step";
    if (shows(host_in_launches_ns))
        graph_reason
            += ", for the framework's host work between the step's launches for " + of_step(host_in_launches_ns);
    if (shows(after_sync_ns))
        graph_reason += ", for the dispatch after each host-blocking sync returned for " + of_step(after_sync_ns);
    if (shows(overlap_ns))
        graph_reason += sync_ns > 0
            ? " (the estimate is the median step's, the parts are means: " + of_step(overlap_ns) + " more)"
            : ", and a replay would run the host work outside the step's launches while the GPU works, for "
                + of_step(overlap_ns);
    // Graph-aware (docs/analysis.md "What-if estimates"): steps whose kernels already run from CUDA graphs are not told
    // to capture one.
    const LaunchStats& l = report.launch;
    const double graph_share
        = l.kernels > 0 ? static_cast<double>(l.graph_kernels) / static_cast<double>(l.kernels) : 0.0;
    w.graph_kernel_share = graph_share;
    if (graph_share >= kGraphedStepShare) {
        // What remains is the host's work between the graph launches (and the launches' own gaps): a replay of the
        // whole step as one graph, or less Python between the replays, gives it back.
        const int64_t between_ns = launch_ns + host_in_launches_ns;
        add(RecommendationKind::CudaGraphs, "Cut the host work between the step's CUDA graph launches",
            fmt::format("the step's kernels already run from CUDA graphs ({} of {}); between the graph launches the "
                        "GPU waited for the host for {} of each step",
                l.graph_kernels, l.kernels, of_step(between_ns)),
            between_ns);
    } else {
        add(RecommendationKind::CudaGraphs,
            graph_share > 0
                ? "Capture the rest of the step in CUDA Graphs (or torch.compile with mode=\"reduce-overhead\")"
                : "Capture the step in a CUDA Graph (or torch.compile with mode=\"reduce-overhead\")",
            graph_share > 0 ? fmt::format("{}% of the step's kernels run from CUDA graphs already; ",
                                  std::lround(100 * graph_share))
                    + graph_reason
                            : std::move(graph_reason),
            graph_saving_ns);
    }
    // Every host-blocking sync's idle time, as the what-if's "without sync stalls"; the API that caused the most is
    // named.
    const SyncApiSummary* worst = nullptr;
    for (const SyncApiSummary& api : report.syncs.by_api)
        if (!worst || api.idle_caused_ns > worst->idle_caused_ns)
            worst = &api;
    if (worst && worst->idle_caused_ns > 0)
        add(RecommendationKind::RemoveSync,
            "Remove or defer the host-blocking syncs (.item(), .cpu(), blocking copies)",
            "host-blocking calls left the GPU idle for " + of_step(sync_ns) + " of each step, " + worst->name + " ("
                + std::to_string(worst->count) + " calls in the steps) the most, for "
                + of_step(per_step(worst->idle_caused_ns)),
            sync_ns);
    // FP8 bookkeeping: the amax/scale and cast kernels are small and many; fused (as TransformerEngine does), their
    // time mostly disappears along with their launches.
    const ClassTotals& amax = report.kernel_classes.of(KernelClass::AmaxScale);
    const ClassTotals& cast = report.kernel_classes.of(KernelClass::Cast);
    const int64_t bookkeeping_ns
        = std::min(w.mean_step_ns, (amax.time_ns + cast.time_ns) / steps / kernel_devices(report));
    const int64_t bookkeeping_kernels = (amax.count + cast.count) / steps;
    if (bookkeeping_kernels > 0)
        add(RecommendationKind::FuseFp8Bookkeeping,
            "Fuse the FP8 cast and amax/scale kernels into the neighbouring ops",
            std::to_string(bookkeeping_kernels) + " cast and amax/scale kernels per step", bookkeeping_ns);
    // Host idle between steps (before the step's first launch, after its last): data loading, logging. Inside the
    // step's launches it is the framework's work, which the CUDA Graphs recommendation covers.
    add(RecommendationKind::ReduceHostWork, "Reduce host work between steps (data loading, logging, Python overhead)",
        "the launching thread issued nothing while the GPU waited, outside the step's launches, for "
            + percent(static_cast<double>(host_ns) / static_cast<double>(w.mean_step_ns)) + " of each step",
        host_ns);
    std::ranges::sort(w.recommendations,
        [](const Recommendation& a, const Recommendation& b) { return a.saving_per_step_ns > b.saving_per_step_ns; });
    return w;
}

} // namespace fp8scope::analyzer
