// The change-point test that tells a shift from noise in a series over steps (docs/analysis.md "Compare: drift"):
// compare runs it on each matched site's series, the numerics verdict on one trace's own amax climb.
#pragma once

#include "fp8scope/analyzer/numerics/drift_evidence.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer::detail {

// The change-point test over one series (docs/analysis.md "Compare: drift"). `direction`: +1 a rise is drift, -1 a
// fall, 0 either. `relative_floor`: the shift must also reach this many times |mean before|. nullopt: no drift.
std::optional<DriftEvidence> change_point(const std::string& series, const std::vector<int64_t>& steps,
    const std::vector<double>& values, int direction, double floor, double relative_floor = 0);

// The knee of a climb: the index k (kDriftMinStepsBefore <= k <= last) of the least-squares fit of
// x_i = a + b * max(0, i - k + 1), flat before index k and rising linearly from it; the earliest k wins a tie.
size_t knee_of(const std::vector<double>& values, size_t last);

// change_point() for a rise that climbs: the onset is the knee of the least-squares flat-then-linear fit up to the
// split, when the shift measured from the knee passes the same test; else the split.
std::optional<DriftEvidence> climb_onset(
    const std::string& series, const std::vector<int64_t>& steps, const std::vector<double>& values, double floor);

} // namespace fp8scope::analyzer::detail
