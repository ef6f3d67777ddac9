// What-if estimates and recommendations (docs/analysis.md "What-if estimates"). Each carries its estimated saving per
// step, computed from the report's own figures: removing a cause of idle time can at best give back the idle time it
// caused, so these are upper bounds on what the change saves.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// A recommendation is made only when it saves at least this share of a step: below 1% it is noise, and a report
// that always recommends everything is not read. Reports print it.
inline constexpr double kMinRecommendationSavingShare = 0.01;
// Steps whose kernels run from CUDA graphs at least this share of the time are already captured (JAX, torch.compile
// with mode="reduce-overhead", a hand-made graph): they are told to cut the host work between the graph launches,
// not to capture a graph (docs/analysis.md "What-if estimates").
inline constexpr double kGraphedStepShare = 0.9;

enum class RecommendationKind { CudaGraphs, RemoveSync, FuseFp8Bookkeeping, ReduceHostWork };

// The step where the figure behind a kind of recommendation is the largest share of the step's time.
struct RecommendationStep {
    int64_t step_index = 0; // StepInterval::index
    double share = 0; // the figure / that step's time
};

struct Recommendation {
    RecommendationKind kind = RecommendationKind::CudaGraphs;
    std::string title; // one line, e.g. "Capture the step in a CUDA Graph"
    std::string reason; // the figure that triggered it
    int64_t saving_per_step_ns = 0; // estimated, an upper bound
    double saving_share = 0; // saving / mean step time
    // Where it matters most (recommendation_worst_step()), so that a finding points at a place in the trace.
    std::optional<RecommendationStep> worst_step;
};

struct WhatIf {
    int64_t mean_step_ns = 0;
    // The CUDA Graphs estimate, per step and device, averaged (docs/analysis.md "What-if estimates"): each launch
    // bubble shrinks to the graph's kernel-to-kernel gap, and host stalls stay. Without a sync in the step the GPU
    // then runs ahead of the host, so the step takes max(host stall, GPU time); with one, the two add up.
    int64_t without_launch_overhead_ns = 0;
    int64_t without_syncs_ns = 0; // step time minus sync-caused idle
    // The share of the steps' kernels launched from CUDA graphs; at least kGraphedStepShare: the steps are captured
    // already, and the CUDA Graphs estimate is no change to make.
    double graph_kernel_share = 0;
    // Largest saving first; only savings of at least kMinRecommendationSavingShare of a step.
    std::vector<Recommendation> recommendations;
};

WhatIf estimate_what_if(const Report& report);
const char* recommendation_kind_name(RecommendationKind kind);

// What a kind's worst step is measured on: "idle caused by launch" (cuda_graphs), "idle caused by sync"
// (remove_sync), "idle caused by host" (reduce_host_work), "cast and amax/scale kernel time" (fuse_fp8_bookkeeping).
const char* recommendation_figure(RecommendationKind kind);

// The bubble cause behind a kind of recommendation, as recommendation_figure() names it (remove_sync: idle caused
// by sync, ...): what a finding highlights in its worst step. nullopt for fuse_fp8_bookkeeping, whose figure is
// kernel time, not idle time.
std::optional<BubbleCause> recommendation_cause(RecommendationKind kind);

// The step where recommendation_figure(kind) is the largest share of the step's time (bubble figures summed over
// the devices of the report's totals, bubbles_per_step(); kernel time over all devices, as the kernel classes are);
// ties go to the earlier step. Also for kinds the report does not recommend, so that a passing check can say how
// close it came. nullopt without steps.
std::optional<RecommendationStep> recommendation_worst_step(const Report& report, RecommendationKind kind);

} // namespace fp8scope::analyzer
