// Scalars that went NaN (docs/analysis.md "NaN scalars"): for each scalar the job logged (fp8scope.log_scalar, the
// collector's amax_D values) and that was NaN at least once, when it first was and how often. A NaN loss is the first
// sign of a diverging FP8 run; the report names it instead of letting it vanish into a median.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

struct NanScalar {
    std::string name;
    int64_t nan_values = 0; // values that were NaN
    int64_t values = 0; // every value of the scalar, NaN or not
    std::optional<int64_t> first_step; // the step number logged with the first NaN; nullopt without step markers
    int64_t first_ns = 0; // when the first NaN was logged
};

// One entry per scalar with a NaN value, in the order of their first NaN (then by name). Over the whole trace,
// warm-up included: a NaN is news wherever it is. Empty for a trace without NaN scalars. O(scalars).
std::vector<NanScalar> find_nan_scalars(const TraceModel& model);

} // namespace fp8scope::analyzer
