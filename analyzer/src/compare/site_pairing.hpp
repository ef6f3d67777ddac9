// How a group of same-shaped sites (one path, shape, batch and operand role) pairs across a run and its reference
// (docs/analysis.md "Compare", sites). Pure functions over a cost matrix, unit-tested.
#pragma once

#include "compare/compare_detail.hpp"

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

// Summed |log2 amax ratio| over the first kBaselineSteps steps both sites sampled: how well two sites' early amaxes
// agree (0 for the same tensor in twins).
double early_amax_cost(const std::map<int64_t, StepSample>& a, const std::map<int64_t, StepSample>& b);

// Groups of equal size: order[i] is the reference index paired with the run's i-th site (step order). Step order,
// unless another pairing has a smaller summed cost: autograd may run a layer's two same-shaped backward GEMMs in
// another order in the other run. A tie keeps step order; groups of more than 7 keep step order.
std::vector<size_t> pair_by_early_amax(const std::vector<std::vector<double>>& cost);

// Groups of unequal size (a GEMM that added C in one run only is named apart, so its shape group there is one
// short): (run index, reference index) pairs. Both sides keep step order; the larger side's sites left out are those
// whose leaving out gives the smallest summed cost (a tie leaves out the last). More than 7 on the larger side: its
// first ones in step order.
std::vector<std::pair<size_t, size_t>> pair_unequal(const std::vector<std::vector<double>>& cost);

} // namespace fp8scope::analyzer::detail
