// kernel_table(): the Kernels view's rows, one per distinct name, in one pass over the kernels (kernel_table.hpp).
#include "fp8scope/analyzer/kernels/kernel_table.hpp"

#include "model/duration_figures.hpp"
#include "model/step_locator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace fp8scope::analyzer {

KernelTableResult kernel_table(const TraceModel& model, const StepSet& steps)
{
    constexpr uint32_t kNoRow = std::numeric_limits<uint32_t>::max();
    KernelClassCache classes(model);
    const KernelTable& kernels = model.kernels;
    KernelTableResult result;
    result.steps = steps.steps.size();
    result.kernels = static_cast<int64_t>(kernels.size());

    std::vector<uint32_t> row_of(model.strings.size(), kNoRow); // table row by name (StringRef index)
    std::optional<StringRef> empty_name; // the first empty name met stands for every empty one
    std::vector<detail::DurationFigures> figures; // per table row
    detail::StepWalker walker(steps.steps);
    for (size_t k = 0; k < kernels.size(); ++k) {
        auto [cls, name] = classes.of(k);
        if (model.strings[name].empty())
            name = empty_name.value_or(name);
        if (model.strings[name].empty() && !empty_name)
            empty_name = name;
        uint32_t& slot = row_of[name.index];
        if (slot == kNoRow) {
            slot = static_cast<uint32_t>(result.rows.size());
            KernelTableRow& fresh = result.rows.emplace_back();
            fresh.name = name;
            fresh.cls = cls;
            figures.emplace_back();
        }
        KernelTableRow& row = result.rows[slot];
        const int64_t start_ns = kernels.start_ns[k];
        const int64_t duration_ns = kernels.end_ns[k] - start_ns;
        figures[slot].add(duration_ns);
        result.total_ns += duration_ns;
        // Kernels come in start order, so each row's steps come in step order.
        const std::optional<size_t> step = walker.position_of(start_ns);
        if (!step)
            continue;
        row.count_in_steps += 1;
        row.time_in_steps_ns += duration_ns;
        if (row.per_step.empty() || row.per_step.back().step != *step)
            row.per_step.push_back({ .step = *step });
        row.per_step.back().count += 1;
        row.per_step.back().time_ns += duration_ns;
    }

    const double step_count = static_cast<double>(result.steps);
    for (size_t i = 0; i < result.rows.size(); ++i) {
        KernelTableRow& row = result.rows[i];
        figures[i].fill(row);
        if (result.steps > 0) {
            row.count_per_step = static_cast<double>(row.count_in_steps) / step_count;
            row.time_per_step_ns = static_cast<double>(row.time_in_steps_ns) / step_count;
        }
    }
    std::ranges::sort(result.rows, [](const KernelTableRow& a, const KernelTableRow& b) {
        return std::tuple(-a.total_ns, -a.count, a.name.index) < std::tuple(-b.total_ns, -b.count, b.name.index);
    });
    return result;
}

} // namespace fp8scope::analyzer
