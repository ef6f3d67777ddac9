#include "capture/steps.hpp"

namespace fp8scope::collector {

bool Steps::begin_optimizer_step(int64_t step)
{
    if (marked())
        return false; // the job marks its steps: they win, as in the analyzer
    if (!optimizer_driven() && nvtx_ranges_seen() > 0)
        return false; // NVTX step ranges came first: they keep the count (one source per process)
    optimizer_.store(step, std::memory_order_relaxed);
    return true;
}

std::optional<int64_t> Steps::current() const
{
    if (const int64_t marked = marked_.load(std::memory_order_relaxed); marked >= 0)
        return marked;
    if (const int64_t optimizer = optimizer_.load(std::memory_order_relaxed); optimizer >= 0)
        return optimizer;
    if (const int64_t ranges = nvtx_ranges_seen(); ranges > 0)
        return ranges - 1;
    return std::nullopt;
}

bool is_step_range_name(std::string_view name)
{
    return name == "step" || name == "train_step" || name == "iteration" || name.starts_with("ProfilerStep#");
}

} // namespace fp8scope::collector
