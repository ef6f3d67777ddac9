// Shared by the tensor-health and tensor-budget tests (header-only): a healthy default sample that each test
// changes in the one field its rule reads, and hand-made step sets, so that the step rule under test is explicit.
#pragma once

#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "tensor_samples.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8scope::testing {

// Steps [start, start + length) numbered first_index, first_index + 1, ... back to back.
inline analyzer::StepSet step_set(
    analyzer::StepSource source, int64_t first_index, int64_t count, int64_t start_ns, int64_t length_ns)
{
    analyzer::StepSet set;
    set.source = source;
    for (int64_t i = 0; i < count; ++i)
        set.steps.push_back({ first_index + i, start_ns + i * length_ns, start_ns + (i + 1) * length_ns });
    return set;
}

// A BF16 -> E4M3 probe site named `name` with no NVTX path.
inline int64_t probe_site(Scenario& s, const std::string& name)
{
    return s.tensor_site(name, schema::TensorRole::Other, schema::Dtype::BFloat16, 10, 100);
}

// Site ids of a ranking (indices into h.sites), and one site's result by id.
inline std::vector<int64_t> site_ids(const analyzer::TensorHealth& h, const std::vector<size_t>& ranking)
{
    std::vector<int64_t> ids;
    for (const size_t i : ranking)
        ids.push_back(h.sites.at(i).site_id);
    return ids;
}

inline const analyzer::TensorSiteHealth& site(const analyzer::TensorHealth& h, int64_t id)
{
    for (const analyzer::TensorSiteHealth& s : h.sites)
        if (s.site_id == id)
            return s;
    FAIL("site " << id << " is not in the result");
    throw 0;
}

} // namespace fp8scope::testing
