// Walks the GPU activities (kernels, copies, memsets) of a trace in start order, merged from the three tables
// (each sorted by start, a TraceModel invariant), without copying them: O(1) memory, no allocation per row.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace fp8scope::analyzer::detail {

enum class ActivityKind : uint8_t { Kernel, Memcpy, Memset };

struct Activity {
    ActivityKind kind = ActivityKind::Kernel;
    size_t row = 0; // in its table
    int64_t start_ns = 0, end_ns = 0;
    uint32_t device_id = 0, correlation_id = 0;
};

class ActivityCursor {
public:
    // Only the activities of `device` when given, else all of them.
    explicit ActivityCursor(const TraceModel& model, std::optional<uint32_t> device = std::nullopt)
        : model_(model)
        , device_(device)
    {
    }

    bool next(Activity& out)
    {
        skip(model_.kernels.device_id, kernel_);
        skip(model_.memcpys.device_id, copy_);
        skip(model_.memsets.device_id, set_);
        const int64_t kernel_start = kernel_ < model_.kernels.size() ? model_.kernels.start_ns[kernel_] : INT64_MAX;
        const int64_t copy_start = copy_ < model_.memcpys.size() ? model_.memcpys.start_ns[copy_] : INT64_MAX;
        const int64_t set_start = set_ < model_.memsets.size() ? model_.memsets.start_ns[set_] : INT64_MAX;
        if (kernel_ < model_.kernels.size() && kernel_start <= copy_start && kernel_start <= set_start) {
            out = { ActivityKind::Kernel, kernel_, kernel_start, model_.kernels.end_ns[kernel_],
                model_.kernels.device_id[kernel_], model_.kernels.correlation_id[kernel_] };
            ++kernel_;
            return true;
        }
        if (copy_ < model_.memcpys.size() && copy_start <= set_start) {
            out = { ActivityKind::Memcpy, copy_, copy_start, model_.memcpys.end_ns[copy_],
                model_.memcpys.device_id[copy_], model_.memcpys.correlation_id[copy_] };
            ++copy_;
            return true;
        }
        if (set_ < model_.memsets.size()) {
            out = { ActivityKind::Memset, set_, set_start, model_.memsets.end_ns[set_], model_.memsets.device_id[set_],
                model_.memsets.correlation_id[set_] };
            ++set_;
            return true;
        }
        return false;
    }

private:
    void skip(const std::vector<uint32_t>& devices, size_t& index) const
    {
        if (!device_)
            return;
        while (index < devices.size() && devices[index] != *device_)
            ++index;
    }

    const TraceModel& model_;
    std::optional<uint32_t> device_;
    size_t kernel_ = 0, copy_ = 0, set_ = 0;
};

} // namespace fp8scope::analyzer::detail
