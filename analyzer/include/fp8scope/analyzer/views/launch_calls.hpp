// The API call that launched each piece of GPU work, by correlation id: the runtime call when a driver call made
// inside it shares the id (docs/analysis.md "Launch statistics"). The rule the bubble causes and the launch statistics
// use (launch_call_index.hpp), for a presenter that walks the whole trace without the timeline's index, which costs
// about 24 bytes per item: `fp8scope export` draws its launch flows from it at 4 bytes per correlation id.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace fp8scope::analyzer {

namespace detail {
class CorrelationIndex;
}

class LaunchCalls {
public:
    explicit LaunchCalls(const ApiTable& api_calls);
    ~LaunchCalls();
    LaunchCalls(LaunchCalls&&) noexcept;
    LaunchCalls& operator=(LaunchCalls&&) noexcept;

    // The row in TraceModel::api_calls of the call that carries `correlation_id`; nullopt for 0 and unknown ids.
    std::optional<size_t> find(uint32_t correlation_id) const;

private:
    std::unique_ptr<const detail::CorrelationIndex> index_;
};

} // namespace fp8scope::analyzer
