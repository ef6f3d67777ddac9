// Types every analysis shares (spec "Analysis definitions", docs/analysis.md). Steps are the unit that every
// figure of a report is given per; the step finder (steps.hpp) makes them, the other analyses take them as input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// Where the steps came from, in the spec's order of preference.
enum class StepSource {
    Markers, // fp8scope.step() markers (FP8SCOPE_STEP_MARKER)
    Nvtx, // NVTX ranges matching a pattern
    Automatic, // the repeating kernel sequence
    WholeTrace, // nothing found: the whole trace is one step
};

struct StepInterval {
    int64_t index = 0; // the job's step number (marker or NVTX number when known, else its position)
    int64_t start_ns = 0;
    int64_t end_ns = 0; // exclusive
};

struct StepSet {
    StepSource source = StepSource::WholeTrace;
    std::string detail; // e.g. the NVTX range name that matched, or how the period was found
    std::vector<StepInterval> steps; // warm-up steps already removed; in time order, not overlapping
    int64_t warmup_excluded = 0;
};

} // namespace fp8scope::analyzer
