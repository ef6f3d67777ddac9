#include "fp8scope/present/selection_wording.hpp"

#include "fp8scope/analyzer/steps/steps.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fp8scope::present {
namespace {

std::string device_list(const std::vector<uint32_t>& devices)
{
    if (devices.empty())
        return "none";
    return fmt::format("{}", fmt::join(devices, ", "));
}

std::string step_range(const analyzer::Selection& s)
{
    if (!s.first_step)
        return "no steps";
    if (*s.first_step == *s.last_step)
        return fmt::format("step {}", *s.first_step);
    return fmt::format("steps {}–{}", *s.first_step, *s.last_step);
}

std::string bound(const std::optional<int64_t>& step)
{
    return step ? std::to_string(*step) : std::string();
}

} // namespace

std::string empty_selection_text(const analyzer::Selection& s)
{
    if (!s.empty)
        return {};
    const analyzer::EmptySelection& e = *s.empty;
    using Reason = analyzer::EmptySelection::Reason;
    switch (e.reason) {
    case Reason::WarmupLeavesNone:
        return fmt::format("--warmup {} leaves no step: the trace has {} step{} ({}); use --warmup {} or less",
            e.warmup, s.steps_found, s.steps_found == 1 ? "" : "s", analyzer::step_source_name(e.source),
            s.steps_found - 1);
    case Reason::StepsInWarmup:
        return fmt::format("--steps {}:{} falls in the warm-up: the first {} {} left out as warm-up (the steps left "
                           "start at {}); add --warmup 0 to analyse them",
            bound(e.first_step), bound(e.last_step), e.warmup_excluded,
            e.warmup_excluded == 1 ? "step is" : "steps are", s.first_step.value_or(0));
    case Reason::StepsSelectNone:
        return fmt::format("--steps {}:{} selects none of {}", bound(e.first_step), bound(e.last_step), step_range(s));
    case Reason::NoSuchDevice:
        return fmt::format("--device {}: no device {} with GPU activity in the analysed steps; devices: {}", e.device,
            e.device, device_list(s.devices));
    }
    return {};
}

} // namespace fp8scope::present
