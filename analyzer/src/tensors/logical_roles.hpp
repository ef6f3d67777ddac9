// What a site's tensor is in the model (docs/analysis.md "Compare", logical roles): compare labels and pairs sites by
// it, the numerics verdict groups a cast's code sites with its probe.
#pragma once

#include "tensors/site_samples.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

// What a site's tensor is in the model: "activation", "weight", "gradient" or "output", when the trace says. A probe
// says by its role; a GEMM output is "output"; an E5M2 operand is a gradient (the HYBRID recipe); another FP8
// operand is the probe's tensor whose 1/scale equals its scale_inv in the same step and module (the cast that
// made it).
class LogicalRoles {
public:
    LogicalRoles(const TraceModel& model, const SiteSamples& samples);
    std::optional<std::string> of(const TensorSite& site) const;
    // The probe site whose 1/scale equals this FP8 operand's scale_inv in most of its steps (same module).
    std::optional<int64_t> twin(const TensorSite& site) const;

private:
    struct ProbeScale {
        double scale_inv = 0;
        std::string role;
        int64_t site_id = 0;
    };
    const TraceModel& model_;
    const SiteSamples& samples_;
    std::map<std::pair<int64_t, std::string>, std::vector<ProbeScale>> probes_; // (step, module) -> scales
};

} // namespace fp8scope::analyzer::detail
