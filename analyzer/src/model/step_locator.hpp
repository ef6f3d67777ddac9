// Which analysed step holds a tensor sample or a scalar (shared by tensor health, compare and the tensor series), and
// which holds each of a series of times in ascending order (kernel classes, the kernel table).
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

namespace fp8scope::analyzer::detail {

// Which analysed step holds a sample. With steps from markers, the sample's own step number is the
// collector's stamp from the same markers, so it names the step exactly (also for a sample enqueued after the
// analyser cut the last step short); otherwise the step whose [start, end) holds the sample's timestamp, the
// host time its statistics were enqueued, like the markers and NVTX ranges that make steps.
class StepLocator {
public:
    explicit StepLocator(const StepSet& steps)
        : steps_(steps.steps)
        , by_marker_(steps.source == StepSource::Markers)
    {
        for (const StepInterval& s : steps_)
            indices_.push_back(s.index);
        std::ranges::sort(indices_);
    }

    // `own_step`: the collector's step number of the row, `timestamp_ns`: the host time it was recorded.
    std::optional<int64_t> analysed_step(std::optional<int64_t> own_step, int64_t timestamp_ns) const
    {
        if (by_marker_ && own_step)
            return std::ranges::binary_search(indices_, *own_step) ? own_step : std::nullopt;
        const auto after = std::ranges::upper_bound(steps_, timestamp_ns, {}, &StepInterval::start_ns);
        if (after == steps_.begin())
            return std::nullopt;
        const StepInterval& step = *std::prev(after);
        return timestamp_ns < step.end_ns ? std::optional<int64_t>(step.index) : std::nullopt;
    }
    template <typename Row> std::optional<int64_t> analysed_step(const Row& row) const
    {
        return analysed_step(row.step, row.timestamp_ns);
    }

private:
    const std::vector<StepInterval>& steps_;
    bool by_marker_ = false;
    std::vector<int64_t> indices_;
};

// The position in `steps` (sorted by start, not overlapping, as StepSet::steps) of the step whose [start, end) holds
// each time, for times given in ascending order (rows of an activity table): one forward walk, O(steps + times).
class StepWalker {
public:
    explicit StepWalker(const std::vector<StepInterval>& steps)
        : steps_(steps)
    {
    }

    std::optional<size_t> position_of(int64_t t_ns)
    {
        while (next_ < steps_.size() && steps_[next_].end_ns <= t_ns)
            ++next_;
        if (next_ == steps_.size() || t_ns < steps_[next_].start_ns)
            return std::nullopt;
        return next_;
    }

private:
    const std::vector<StepInterval>& steps_;
    size_t next_ = 0;
};

} // namespace fp8scope::analyzer::detail
