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
// analyser cut the last step short); otherwise the step whose host interval holds the sample's timestamp, the host
// time its statistics were enqueued: from the step's host start (StepInterval::host_start_ns) for as long as the
// step lasts on the device, and no further than the next step's host start. A loop that runs ahead of its GPU
// enqueues a step's samples before the device reaches that step.
class StepLocator {
public:
    explicit StepLocator(const StepSet& steps)
        : steps_(steps.steps)
        , by_marker_(steps.source == StepSource::Markers || steps.source == StepSource::Optimizer)
    {
        for (const StepInterval& s : steps_) {
            indices_.push_back(s.index);
            host_starts_.push_back(s.host_start_ns == StepInterval::kUnknownHostStart ? s.start_ns : s.host_start_ns);
        }
        std::ranges::sort(indices_);
    }

    // `own_step`: the collector's step number of the row, `timestamp_ns`: the host time it was recorded.
    std::optional<int64_t> analysed_step(std::optional<int64_t> own_step, int64_t timestamp_ns) const
    {
        if (by_marker_ && own_step)
            return std::ranges::binary_search(indices_, *own_step) ? own_step : std::nullopt;
        const size_t after = size_t(std::ranges::upper_bound(host_starts_, timestamp_ns) - host_starts_.begin());
        if (after == 0)
            return std::nullopt;
        const StepInterval& step = steps_[after - 1];
        int64_t host_end_ns = host_starts_[after - 1] + (step.end_ns - step.start_ns);
        if (after < host_starts_.size())
            host_end_ns = std::min(host_end_ns, host_starts_[after]);
        return timestamp_ns < host_end_ns ? std::optional<int64_t>(step.index) : std::nullopt;
    }
    template <typename Row> std::optional<int64_t> analysed_step(const Row& row) const
    {
        return analysed_step(row.step, row.timestamp_ns);
    }

private:
    const std::vector<StepInterval>& steps_;
    bool by_marker_ = false;
    std::vector<int64_t> indices_;
    std::vector<int64_t> host_starts_; // each step's host start (its device start when unknown), ascending
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
