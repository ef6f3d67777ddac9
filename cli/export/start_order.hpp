// The rows of a few tables, each sorted by start (as the model keeps them), visited together in order of start and,
// for equal starts, longest first: the order in which ChromeTraceTracks::place() needs the slices of one track.
// Only one group of equal starts is held at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace fp8scope::cli {

struct TableRow {
    uint8_t table = 0; // the position of the table in the StartOrder's list
    uint32_t row = 0;
};

template <size_t N> class StartOrder {
public:
    struct Table {
        std::span<const int64_t> start_ns, end_ns;
    };
    explicit StartOrder(std::array<Table, N> tables)
        : tables_(tables)
    {
    }

    // The next rows that share the smallest start not yet visited, longest first; false when every row is visited.
    bool next(std::vector<TableRow>& group)
    {
        group.clear();
        int64_t start = std::numeric_limits<int64_t>::max();
        bool any = false;
        for (size_t t = 0; t < N; ++t)
            if (cursor_[t] < tables_[t].start_ns.size()) {
                start = std::min(start, tables_[t].start_ns[cursor_[t]]);
                any = true;
            }
        if (!any)
            return false;
        for (size_t t = 0; t < N; ++t)
            while (cursor_[t] < tables_[t].start_ns.size() && tables_[t].start_ns[cursor_[t]] == start)
                group.push_back({ static_cast<uint8_t>(t), static_cast<uint32_t>(cursor_[t]++) });
        if (group.size() > 1)
            std::stable_sort(
                group.begin(), group.end(), [this](TableRow l, TableRow r) { return end_of(l) > end_of(r); });
        return true;
    }

    size_t visited() const
    {
        size_t sum = 0;
        for (size_t c : cursor_)
            sum += c;
        return sum;
    }

private:
    int64_t end_of(TableRow r) const { return tables_[r.table].end_ns[r.row]; }

    std::array<Table, N> tables_;
    std::array<size_t, N> cursor_ {};
};

} // namespace fp8scope::cli
