// Whether a kernel belongs to the what-if's analysed steps: it starts inside one of them.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace fp8scope::analyzer::detail {

// `steps.steps` in start order, as the report gives them.
inline bool starts_in_analysed_step(const StepSet& steps, int64_t start_ns)
{
    const auto after = std::ranges::upper_bound(steps.steps, start_ns, {}, &StepInterval::start_ns);
    return after != steps.steps.begin() && start_ns < std::prev(after)->end_ns;
}

} // namespace fp8scope::analyzer::detail
