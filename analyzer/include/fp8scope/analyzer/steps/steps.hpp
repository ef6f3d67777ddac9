// Finds the training steps of a trace (docs/analysis.md "Steps").
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <optional>
#include <string>

namespace fp8scope::analyzer {

struct StepOptions {
    // ECMAScript regex that an NVTX range's whole text must match; nullopt: kDefaultNvtxStepPattern.
    std::optional<std::string> nvtx_pattern;
    int warmup = 2; // first steps to drop; at least one step is always kept
    bool ignore_markers = false;
    bool ignore_nvtx = false;
};

// ProfilerStep#N (torch.profiler), step, train_step, iteration, optionally followed by a number.
inline constexpr const char* kDefaultNvtxStepPattern = R"(ProfilerStep#\d+|(step|train_step|iteration)([ _#]?\d+)?)";

// An error message when `pattern` is not a valid regex, nullopt when it is (for the CLI's usage errors).
std::optional<std::string> check_nvtx_step_pattern(const std::string& pattern);

// The steps, by the first source that yields any: step markers, NVTX ranges, the repeating kernel sequence, the
// whole trace. An invalid pattern matches nothing. A trace with no activity at all gives no steps.
StepSet find_steps(const TraceModel& model, const StepOptions& options = {});

// The name of a step source as reports print it: "markers", "nvtx", "automatic", "whole trace".
const char* step_source_name(StepSource source);

} // namespace fp8scope::analyzer
