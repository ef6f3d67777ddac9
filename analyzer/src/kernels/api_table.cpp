// api_table(): the CUDA API calls by name, in one pass over the calls (api_table.hpp).
#include "fp8scope/analyzer/kernels/api_table.hpp"

#include "model/duration_figures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace fp8scope::analyzer {

ApiTableResult api_table(const TraceModel& model)
{
    constexpr uint32_t kNoRow = std::numeric_limits<uint32_t>::max();
    const ApiTable& calls = model.api_calls;
    ApiTableResult result;
    result.calls = static_cast<int64_t>(calls.size());
    std::vector<uint32_t> row_of(model.strings.size(), kNoRow); // table row by name (StringRef index)
    std::vector<detail::DurationFigures> figures; // per row
    for (size_t i = 0; i < calls.size(); ++i) {
        uint32_t& slot = row_of[calls.name[i].index];
        if (slot == kNoRow) {
            slot = static_cast<uint32_t>(result.rows.size());
            result.rows.push_back({ .name = calls.name[i], .driver = calls.is_driver[i] != 0 });
            figures.emplace_back();
        }
        const int64_t duration_ns = calls.end_ns[i] - calls.start_ns[i];
        figures[slot].add(duration_ns);
        result.total_ns += duration_ns;
    }
    for (size_t i = 0; i < result.rows.size(); ++i) {
        figures[i].fill(result.rows[i]);
    }
    std::ranges::sort(result.rows, [](const ApiTableRow& a, const ApiTableRow& b) {
        return std::tuple(-a.total_ns, -a.count, a.name.index) < std::tuple(-b.total_ns, -b.count, b.name.index);
    });
    return result;
}

std::string_view api_display_name(std::string_view name)
{
    if (name.size() > 6 && name.substr(name.size() - 6, 2) == "_v")
        return name.substr(0, name.size() - 6);
    return name;
}

} // namespace fp8scope::analyzer
