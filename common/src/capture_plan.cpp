#include "fp8scope/common/capture_plan.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace fp8scope {
namespace {

std::optional<int64_t> parse_count(std::string_view text)
{
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxCaptureStep)
        return std::nullopt;
    return value;
}

// Seconds as a decimal number ("2", "0.5"), at most kMaxCaptureSeconds; in ns.
std::optional<int64_t> parse_seconds(const std::string& text)
{
    if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.'))
        return std::nullopt; // no sign, no "inf" or "nan"
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds < 0 || seconds > kMaxCaptureSeconds)
        return std::nullopt;
    return static_cast<int64_t>(std::llround(seconds * 1e9));
}

CapturePlanResult fail(std::string error)
{
    return { std::nullopt, std::move(error) };
}

std::string quoted(std::string_view option, const std::string& value)
{
    return std::string(option) + " '" + value + "'";
}

} // namespace

std::string_view CapturePlan::mode_name() const
{
    switch (mode) {
    case CaptureMode::Full:
        return "full";
    case CaptureMode::Steps:
        return "steps";
    case CaptureMode::Periodic:
        return "periodic";
    case CaptureMode::ProfilerApi:
        return "cudaProfilerApi";
    case CaptureMode::Time:
        return "time";
    }
    return "full";
}

CapturePlanResult parse_capture_plan(const CaptureRequest& r)
{
    const bool steps = !r.steps.empty(), periodic = !r.every.empty() || !r.length.empty(), range = !r.range.empty(),
               time = !r.delay.empty() || !r.duration.empty();
    if (int(steps) + int(periodic) + int(range) + int(time) > 1)
        return fail("choose one kind of capture window: --capture-steps, --capture-every/--capture-length, "
                    "--capture-range or --delay/--duration");
    CapturePlan plan;
    if (steps) {
        const auto colon = r.steps.find(':');
        const auto first
            = colon == std::string::npos ? std::nullopt : parse_count(std::string_view(r.steps).substr(0, colon));
        const auto last
            = colon == std::string::npos ? std::nullopt : parse_count(std::string_view(r.steps).substr(colon + 1));
        if (!first || !last)
            return fail(
                quoted("--capture-steps", r.steps) + ": expected A:B, two step numbers (0 or more), e.g. 20:29");
        if (*first > *last)
            return fail(quoted("--capture-steps", r.steps) + ": the first step is after the last");
        plan.mode = CaptureMode::Steps;
        plan.first_step = *first;
        plan.last_step = *last;
        plan.options = "--capture-steps " + r.steps;
    } else if (periodic) {
        if (r.every.empty() || r.length.empty())
            return fail("--capture-every N and --capture-length K go together (K steps of every N)");
        const auto every = parse_count(r.every);
        if (!every || *every == 0)
            return fail(quoted("--capture-every", r.every) + ": expected a number of steps, 1 or more");
        const auto length = parse_count(r.length);
        if (!length || *length == 0 || *length > *every)
            return fail(quoted("--capture-length", r.length)
                + ": expected a number of steps from 1 to --capture-every (" + r.every + ")");
        plan.mode = CaptureMode::Periodic;
        plan.every = *every;
        plan.length = *length;
        plan.options = "--capture-every " + r.every + " --capture-length " + r.length;
    } else if (range) {
        if (r.range != "cudaProfilerApi")
            return fail(quoted("--capture-range", r.range) + ": the only range is cudaProfilerApi");
        plan.mode = CaptureMode::ProfilerApi;
        plan.options = "--capture-range cudaProfilerApi";
    } else if (time) {
        if (!r.delay.empty()) {
            const auto delay = parse_seconds(r.delay);
            if (!delay)
                return fail(quoted("--delay", r.delay) + ": expected seconds from 0 to 1000000, e.g. 30 or 2.5");
            plan.delay_ns = *delay;
            plan.options = "--delay " + r.delay;
        }
        if (!r.duration.empty()) {
            const auto duration = parse_seconds(r.duration);
            if (!duration || *duration == 0)
                return fail(quoted("--duration", r.duration) + ": expected seconds above 0, up to 1000000, e.g. 10");
            plan.duration_ns = *duration;
            plan.options += std::string(plan.options.empty() ? "" : " ") + "--duration " + r.duration;
        }
        plan.mode = CaptureMode::Time;
    }
    if (r.stats_outside_windows) {
        if (plan.mode == CaptureMode::Full)
            return fail("--stats-outside-windows needs a capture window option (--capture-steps, --capture-every, "
                        "--capture-range, --delay or --duration)");
        plan.stats_outside_windows = true;
        plan.options += " --stats-outside-windows";
    }
    return { std::move(plan), {} };
}

std::string capture_never_opened_text(std::string_view options, const std::optional<StepsSeen>& steps)
{
    std::string text = "the capture window never opened: ";
    if (!steps)
        return text + "no step markers or NVTX step ranges; use --capture-range, --delay/--duration or fp8scope.step()";
    // The window options alone: --stats-outside-windows says nothing about which steps open one.
    constexpr std::string_view kStatsOption = " --stats-outside-windows";
    if (options.ends_with(kStatsOption))
        options.remove_suffix(kStatsOption.size());
    if (steps->last_is_lower_bound)
        text += "the job's steps (from " + std::to_string(steps->first) + " on) all lie outside ";
    else if (steps->first == steps->last)
        text += "the job's one step (" + std::to_string(steps->first) + ") lies outside ";
    else
        text += "the job's steps (" + std::to_string(steps->first) + " to " + std::to_string(steps->last)
            + ") all lie outside ";
    text += options;
    return text;
}

} // namespace fp8scope
