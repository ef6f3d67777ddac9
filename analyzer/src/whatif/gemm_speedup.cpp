// The GEMM table's lookup: the FP8 speed-up at a BF16 GEMM time (docs/analysis.md "FP8 what-if", docs/benchmarks.md
// "FP8 against BF16 GEMM time").
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fp8scope::analyzer {

GemmSpeedup gemm_speedup(const GemmTable& table, int64_t bf16_ns, bool rowwise)
{
    GemmSpeedup out;
    if (bf16_ns <= 0 || table.rows.empty())
        return out;
    int64_t fastest = INT64_MAX;
    for (const GemmTimeRow& row : table.rows)
        fastest = std::min(fastest, row.bf16_ns);
    if (bf16_ns < fastest / 2)
        return out; // below the table: nothing known
    auto fp8_of = [&](const GemmTimeRow& row) -> std::optional<int64_t> {
        return rowwise ? row.fp8_rowwise_ns : std::optional<int64_t>(row.fp8_tensorwise_ns);
    };
    std::vector<double> speedups;
    const double at = std::log2(static_cast<double>(bf16_ns));
    double nearest_distance = INFINITY;
    double nearest = 1;
    for (const GemmTimeRow& row : table.rows) {
        const auto fp8 = fp8_of(row);
        if (!fp8 || *fp8 <= 0 || row.bf16_ns <= 0)
            continue;
        const double speedup = static_cast<double>(row.bf16_ns) / static_cast<double>(*fp8);
        const double distance = std::abs(std::log2(static_cast<double>(row.bf16_ns)) - at);
        if (distance <= 1)
            speedups.push_back(speedup);
        if (distance < nearest_distance) {
            nearest_distance = distance;
            nearest = speedup;
        }
    }
    if (nearest_distance == INFINITY)
        return out; // no row has this column
    if (speedups.empty())
        speedups.push_back(nearest);
    std::ranges::sort(speedups);
    auto quantile = [&](double q) {
        const double position = q * static_cast<double>(speedups.size() - 1);
        const auto below = static_cast<size_t>(std::floor(position));
        const size_t above = std::min(below + 1, speedups.size() - 1);
        const double share = position - static_cast<double>(below);
        return speedups[below] * (1 - share) + speedups[above] * share;
    };
    out.median = quantile(0.5);
    out.low = quantile(0.25);
    out.high = quantile(0.75);
    out.rows = static_cast<int64_t>(speedups.size());
    return out;
}

} // namespace fp8scope::analyzer
