// The H100's GEMM table and its lookup (docs/analysis.md "FP8 what-if", docs/benchmarks.md "FP8 against BF16 GEMM
// time").
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fp8scope::analyzer {

const GemmTable& h100_gemm_table()
{
    // tests/gpu/tools/gemm_table.py on nvidia-h100-x1, 2026-11-27, two runs averaged; of its 252 shapes, the 64 whose
    // every time is at least kGemmTableMinNs in both runs (below that the calls were timed on the host's dispatch).
    static const GemmTable table { "NVIDIA H100 80GB HBM3", "2026-11-27",
        "tests/gpu/tools/gemm_table.py: torch.mm BF16 and torch._scaled_mm E4M3 x E4M3 -> BF16 (cuBLASLt), GPU time "
        "per call over 20 calls back to back, median of 7, two runs averaged",
        {
            { 512, 8192, 8192, 92873, 53371, 55335 },
            { 1024, 4096, 8192, 89478, 52138, 53948 },
            { 1024, 8192, 4096, 93336, 55524, 59612 },
            { 1024, 8192, 8192, 183174, 105527, 112586 },
            { 2048, 2048, 8192, 88680, 52490, 52682 },
            { 2048, 4096, 4096, 91882, 55540, 60630 },
            { 2048, 4096, 8192, 191836, 110427, 113245 },
            { 2048, 8192, 2048, 97502, 60548, 64802 },
            { 2048, 8192, 4096, 194964, 112506, 118956 },
            { 2048, 8192, 8192, 402590, 213612, 230714 },
            { 4096, 1024, 8192, 88537, 52830, 54588 },
            { 4096, 2048, 4096, 91192, 56282, 58678 },
            { 4096, 2048, 8192, 188752, 107244, 113086 },
            { 4096, 4096, 2048, 98668, 61112, 64584 },
            { 4096, 4096, 4096, 191730, 112310, 117060 },
            { 4096, 4096, 8192, 396689, 214130, 231536 },
            { 4096, 8192, 256, 48484, 50058, 52234 },
            { 4096, 8192, 512, 72180, 51972, 59942 },
            { 4096, 8192, 1024, 106294, 69280, 78056 },
            { 4096, 8192, 2048, 193073, 120676, 133572 },
            { 4096, 8192, 4096, 407298, 212804, 238620 },
            { 4096, 8192, 8192, 820525, 471942, 549670 },
            { 8192, 512, 8192, 92021, 53382, 57344 },
            { 8192, 1024, 4096, 91276, 57872, 59582 },
            { 8192, 1024, 8192, 194118, 109546, 112783 },
            { 8192, 2048, 2048, 98066, 59748, 63874 },
            { 8192, 2048, 4096, 189314, 110320, 118386 },
            { 8192, 2048, 8192, 400448, 214318, 231332 },
            { 8192, 4096, 256, 48522, 44135, 55716 },
            { 8192, 4096, 512, 73302, 49010, 56372 },
            { 8192, 4096, 1024, 102632, 67681, 74940 },
            { 8192, 4096, 2048, 196156, 124694, 134257 },
            { 8192, 4096, 4096, 407071, 229887, 234186 },
            { 8192, 4096, 8192, 790632, 479316, 507073 },
            { 8192, 8192, 256, 94956, 99355, 91050 },
            { 8192, 8192, 512, 119299, 87540, 97380 },
            { 8192, 8192, 1024, 202986, 138082, 165330 },
            { 8192, 8192, 2048, 430358, 238700, 256542 },
            { 8192, 8192, 4096, 800926, 464622, 476422 },
            { 8192, 8192, 8192, 1592012, 922458, 988274 },
            { 16384, 256, 8192, 107834, 62190, 63239 },
            { 16384, 512, 4096, 94028, 59162, 61271 },
            { 16384, 512, 8192, 191773, 113568, 118980 },
            { 16384, 1024, 2048, 97536, 61466, 63008 },
            { 16384, 1024, 4096, 195864, 115153, 119844 },
            { 16384, 1024, 8192, 407870, 220878, 230388 },
            { 16384, 2048, 256, 50558, 44473, 54744 },
            { 16384, 2048, 512, 67410, 48422, 54306 },
            { 16384, 2048, 1024, 103312, 69750, 76218 },
            { 16384, 2048, 2048, 198158, 123556, 134039 },
            { 16384, 2048, 4096, 406970, 224998, 232914 },
            { 16384, 2048, 8192, 823204, 477616, 515416 },
            { 16384, 4096, 256, 89240, 78910, 103288 },
            { 16384, 4096, 512, 124533, 86573, 98407 },
            { 16384, 4096, 1024, 210844, 128318, 150132 },
            { 16384, 4096, 2048, 431308, 237473, 252074 },
            { 16384, 4096, 4096, 808772, 455852, 472807 },
            { 16384, 4096, 8192, 1561035, 932317, 1008589 },
            { 16384, 8192, 256, 170514, 144809, 186562 },
            { 16384, 8192, 512, 226456, 155650, 198595 },
            { 16384, 8192, 1024, 429859, 267178, 298448 },
            { 16384, 8192, 2048, 808912, 454111, 496781 },
            { 16384, 8192, 4096, 1639804, 961620, 1034036 },
            { 16384, 8192, 8192, 3140900, 1782445, 2030258 },
        } };
    return table;
}

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
