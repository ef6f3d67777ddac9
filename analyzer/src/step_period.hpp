// Automatic step detection (docs/analysis.md "Steps", rule 3): the period of the repeating activity sequence of a
// trace's busiest device, for jobs with no step markers and no NVTX steps. Internal to the analyzer; steps.cpp
// turns the period into steps.
#pragma once

#include "fp8scope/analyzer/trace_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer::detail {

struct Period {
    std::vector<int64_t> step_starts_ns;
    std::string description;
    // Set (and no starts) when the evidence disagrees: the report falls back to the whole trace and says why.
    std::string disagreement;
};

// The repeating activity sequence of the busiest device (docs/analysis.md "Steps", automatic detection).
// Each activity is a token (kernel name, copy kind, memset). A loop of S steps makes each periodic token occur
// about a multiple of S times, so S is the largest number that the counts of (nearly) all tokens seen at least
// three times are compatible with. The steps then begin at the occurrences of an anchor token that occurs a few times
// per step: the one after the longest typical device idle time, which is where a training loop's host work (data
// loading, logging, the optimizer's bookkeeping) sits. O(n), two passes, no per-activity allocation.
std::optional<Period> find_step_period(const TraceModel& model);

// Steps from CUDA graph launches (step_graphs.cpp): the thread with the most cudaGraphLaunch/cuGraphLaunch calls,
// when its graphs' activities outnumber the activities launched otherwise over the same span, and the launched
// graph ids repeat with a period of k = 1..8 launches. Each step begins at the first activity of every k-th launch.
std::optional<Period> find_graph_step_period(const TraceModel& model);

} // namespace fp8scope::analyzer::detail
