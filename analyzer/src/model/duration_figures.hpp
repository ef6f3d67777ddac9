// Count, total, min, max, mean and population standard deviation of durations, accumulated one at a time: the figures
// of a name's row in the kernel table (kernel_table.hpp) and the API table (api_table.hpp). Internal to the analyzer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fp8scope::analyzer::detail {

struct DurationFigures {
    int64_t count = 0;
    int64_t total_ns = 0;
    int64_t min_ns = 0, max_ns = 0;
    double sum_squares = 0; // of the durations in ns

    void add(int64_t duration_ns)
    {
        min_ns = count == 0 ? duration_ns : std::min(min_ns, duration_ns);
        max_ns = count == 0 ? duration_ns : std::max(max_ns, duration_ns);
        count += 1;
        total_ns += duration_ns;
        sum_squares += static_cast<double>(duration_ns) * static_cast<double>(duration_ns);
    }
    double mean_ns() const { return count > 0 ? static_cast<double>(total_ns) / static_cast<double>(count) : 0.0; }
    double stddev_ns() const
    {
        const double mean = mean_ns();
        return count > 0 ? std::sqrt(std::max(0.0, sum_squares / static_cast<double>(count) - mean * mean)) : 0.0;
    }
    // Into a table row with count, total_ns, min_ns, max_ns, mean_ns and stddev_ns.
    template <class Row> void fill(Row& row) const
    {
        row.count = count;
        row.total_ns = total_ns;
        row.min_ns = min_ns;
        row.max_ns = max_ns;
        row.mean_ns = mean_ns();
        row.stddev_ns = stddev_ns();
    }
};

} // namespace fp8scope::analyzer::detail
