#include "fp8scope/analyzer/views/launch_calls.hpp"

#include "idle/launch_call_index.hpp"

namespace fp8scope::analyzer {

LaunchCalls::LaunchCalls(const ApiTable& api_calls)
    : index_(std::make_unique<const detail::CorrelationIndex>(detail::launch_call_index(api_calls)))
{
}

LaunchCalls::~LaunchCalls() = default;
LaunchCalls::LaunchCalls(LaunchCalls&&) noexcept = default;
LaunchCalls& LaunchCalls::operator=(LaunchCalls&&) noexcept = default;

std::optional<size_t> LaunchCalls::find(uint32_t correlation_id) const
{
    return index_->find(correlation_id);
}

} // namespace fp8scope::analyzer
