// Compare: which of a group's same-shaped sites pair across the two runs (docs/analysis.md "Compare").
#include "compare/site_pairing.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <cmath>

namespace fp8scope::analyzer::detail {
namespace {

constexpr size_t kMaxPermutedGroup = 7;

std::vector<size_t> identity_order(size_t n)
{
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    return order;
}

// A sample's amax as the other run's tensor would show it. FP8 codes say nothing of the tensor's size (current
// scaling puts every amax at 448): a tensorwise operand's codes times its scale_inv, an operand scaled per row or
// block its per-block statistics' amax of the unscaled tensor.
double comparable_amax(const StepSample& s)
{
    if (s.blocks && positive_finite(s.blocks->amax))
        return s.blocks->amax;
    const auto dtype = static_cast<schema::Dtype>(s.dtype);
    if ((dtype == schema::Dtype::E4M3 || dtype == schema::Dtype::E5M2) && s.scale_inv && positive_finite(*s.scale_inv))
        return s.amax * *s.scale_inv;
    return s.amax;
}

} // namespace

double early_amax_cost(const std::map<int64_t, StepSample>& a, const std::map<int64_t, StepSample>& b)
{
    double cost = 0;
    int used = 0;
    for (const auto& [step, x] : a) {
        if (used == kBaselineSteps)
            break;
        const auto y = b.find(step);
        if (y == b.end())
            continue;
        const double run = comparable_amax(x), ref = comparable_amax(y->second);
        if (!positive_finite(run) || !positive_finite(ref))
            continue;
        cost += std::abs(std::log2(run / ref));
        ++used;
    }
    return cost;
}

std::vector<size_t> pair_by_early_amax(const std::vector<std::vector<double>>& cost)
{
    const size_t n = cost.size();
    std::vector<size_t> order = identity_order(n);
    if (n < 2 || n > kMaxPermutedGroup)
        return order;
    const auto total = [&](const std::vector<size_t>& o) {
        double sum = 0;
        for (size_t i = 0; i < n; ++i)
            sum += cost[i][o[i]];
        return sum;
    };
    std::vector<size_t> candidate = order;
    double best = total(order);
    while (std::ranges::next_permutation(candidate).found)
        if (const double t = total(candidate); t < best) {
            best = t;
            order = candidate;
        }
    return order;
}

std::vector<std::pair<size_t, size_t>> pair_unequal(const std::vector<std::vector<double>>& cost)
{
    const size_t n = cost.size(), m = n ? cost[0].size() : 0;
    const size_t small = std::min(n, m), large = std::max(n, m);
    const auto at
        = [&](size_t i_small, size_t j_large) { return n <= m ? cost[i_small][j_large] : cost[j_large][i_small]; };
    std::vector<char> chosen(large, 0); // an order-keeping choice of `small` of the larger side's sites
    std::fill(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(small), 1);
    std::vector<char> best = chosen;
    if (large <= kMaxPermutedGroup) {
        const auto total = [&](const std::vector<char>& c) {
            double sum = 0;
            for (size_t j = 0, i = 0; j < large; ++j)
                if (c[j])
                    sum += at(i++, j);
            return sum;
        };
        double best_total = total(chosen);
        // prev_permutation from the first-chosen arrangement walks every choice, earliest first.
        while (std::prev_permutation(chosen.begin(), chosen.end()))
            if (const double t = total(chosen); t < best_total) {
                best_total = t;
                best = chosen;
            }
    }
    std::vector<std::pair<size_t, size_t>> pairs; // (run index, reference index)
    for (size_t j = 0, i = 0; j < large; ++j)
        if (best[j]) {
            pairs.emplace_back(n <= m ? i : j, n <= m ? j : i);
            ++i;
        }
    return pairs;
}

} // namespace fp8scope::analyzer::detail
