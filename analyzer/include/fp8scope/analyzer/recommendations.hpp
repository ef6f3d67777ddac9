// What-if estimates and recommendations (spec "What-if"; docs/analysis.md "What-if estimates"). Each carries its
// estimated saving per step, computed from the report's own figures: removing a cause of idle time can at best
// give back the idle time it caused, so these are upper bounds on what the change saves.
#pragma once

#include "fp8scope/analyzer/report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

enum class RecommendationKind { CudaGraphs, RemoveSync, FuseFp8Bookkeeping, ReduceHostWork };

struct Recommendation {
    RecommendationKind kind = RecommendationKind::CudaGraphs;
    std::string title; // one line, e.g. "Capture the step in a CUDA Graph"
    std::string reason; // the figure that triggered it
    int64_t saving_per_step_ns = 0; // estimated, an upper bound
    double saving_share = 0; // saving / mean step time
};

struct WhatIf {
    int64_t mean_step_ns = 0;
    int64_t without_launch_overhead_ns = 0; // step time minus launch-caused idle (the CUDA Graphs estimate)
    int64_t without_syncs_ns = 0; // step time minus sync-caused idle
    std::vector<Recommendation> recommendations; // largest saving first; only savings of >= 1% of a step
};

WhatIf estimate_what_if(const Report& report);
const char* recommendation_kind_name(RecommendationKind kind);

} // namespace fp8scope::analyzer
