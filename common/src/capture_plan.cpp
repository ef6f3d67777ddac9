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
    if (!r.max_size.empty()) {
        if (plan.mode != CaptureMode::Periodic)
            return fail("--max-size needs periodic windows (--capture-every N --capture-length K, or --monitor): "
                        "it drops the oldest ones");
        const auto mib = parse_count(r.max_size);
        if (!mib || *mib < kMinMaxSizeMib || *mib > kMaxMaxSizeMib)
            return fail(quoted("--max-size", r.max_size) + ": expected MiB from " + std::to_string(kMinMaxSizeMib)
                + " to " + std::to_string(kMaxMaxSizeMib) + ", e.g. 2048");
        plan.max_bytes = *mib << 20;
        plan.options += " --max-size " + r.max_size;
    }
    return { std::move(plan), {} };
}

namespace {

constexpr std::string_view kPlanHeader = "fp8scope-capture-plan/1";

std::optional<CaptureMode> mode_named(std::string_view name)
{
    for (const CaptureMode mode :
        { CaptureMode::Full, CaptureMode::Steps, CaptureMode::Periodic, CaptureMode::ProfilerApi, CaptureMode::Time })
        if (CapturePlan plan; (plan.mode = mode, plan.mode_name() == name))
            return mode;
    return std::nullopt;
}

std::optional<int64_t> parse_plan_number(std::string_view text, int64_t max)
{
    const auto value = parse_count(text);
    return value && *value <= max ? value : std::nullopt;
}

} // namespace

std::string serialize_capture_plan(const CapturePlan& plan)
{
    return std::string(kPlanHeader) + " mode=" + std::string(plan.mode_name())
        + " first=" + std::to_string(plan.first_step) + " last=" + std::to_string(plan.last_step)
        + " every=" + std::to_string(plan.every) + " length=" + std::to_string(plan.length)
        + " delay_ns=" + std::to_string(plan.delay_ns)
        + " duration_ns=" + (plan.duration_ns ? std::to_string(*plan.duration_ns) : std::string("-"))
        + " stats_outside=" + (plan.stats_outside_windows ? "1" : "0")
        + (plan.max_bytes > 0 ? " max_bytes=" + std::to_string(plan.max_bytes) : std::string())
        + " options=" + plan.options;
}

CapturePlanResult deserialize_capture_plan(std::string_view text)
{
    const auto bad = [&](std::string_view why) {
        return fail(std::string(kCapturePlanVariable) + " is not a capture plan (" + std::string(why) + ")");
    };
    if (!text.starts_with(kPlanHeader) || text.size() == kPlanHeader.size() || text[kPlanHeader.size()] != ' ')
        return bad(std::string("it does not start with ") + std::string(kPlanHeader));
    text.remove_prefix(kPlanHeader.size() + 1);
    CapturePlan plan;
    // The fields in serialize_capture_plan()'s order, each once; options is the rest of the line.
    constexpr std::string_view kFields[]
        = { "mode", "first", "last", "every", "length", "delay_ns", "duration_ns", "stats_outside" };
    constexpr int64_t kMaxTimeNs = static_cast<int64_t>(kMaxCaptureSeconds * 1e9);
    for (const std::string_view field : kFields) {
        const std::string prefix = std::string(field) + "=";
        if (!text.starts_with(prefix))
            return bad("expected " + prefix);
        text.remove_prefix(prefix.size());
        const size_t space = text.find(' ');
        if (space == std::string_view::npos)
            return bad("it ends before options=");
        const std::string_view value = text.substr(0, space);
        text.remove_prefix(space + 1);
        std::optional<int64_t> number;
        if (field == "mode") {
            const auto mode = mode_named(value);
            if (!mode)
                return bad("unknown mode '" + std::string(value) + "'");
            plan.mode = *mode;
            continue;
        }
        if (field == "duration_ns" && value == "-")
            continue;
        if (field == "stats_outside") {
            if (value != "0" && value != "1")
                return bad("stats_outside is neither 0 nor 1");
            plan.stats_outside_windows = value == "1";
            continue;
        }
        number = parse_plan_number(value, field.ends_with("_ns") ? kMaxTimeNs : kMaxCaptureStep);
        if (!number)
            return bad(std::string(field) + " '" + std::string(value) + "' is not a number in range");
        if (field == "first")
            plan.first_step = *number;
        else if (field == "last")
            plan.last_step = *number;
        else if (field == "every")
            plan.every = *number;
        else if (field == "length")
            plan.length = *number;
        else if (field == "delay_ns")
            plan.delay_ns = *number;
        else
            plan.duration_ns = *number;
    }
    if (text.starts_with("max_bytes=")) { // a bounded plan's one optional field
        text.remove_prefix(10);
        const size_t space = text.find(' ');
        const auto bytes = space == std::string_view::npos
            ? std::nullopt
            : parse_plan_number(text.substr(0, space), kMaxMaxSizeMib << 20);
        if (!bytes || *bytes < (kMinMaxSizeMib << 20))
            return bad("max_bytes is not a size in range");
        plan.max_bytes = *bytes;
        text.remove_prefix(space + 1);
    }
    if (!text.starts_with("options="))
        return bad("expected options=");
    plan.options = std::string(text.substr(8));
    // What parse_capture_plan() would never give: a plan the windows could not follow.
    if (plan.mode == CaptureMode::Steps && plan.first_step > plan.last_step)
        return bad("the first step is after the last");
    if (plan.mode == CaptureMode::Periodic && (plan.every == 0 || plan.length == 0 || plan.length > plan.every))
        return bad("a periodic plan needs 1 <= length <= every");
    if (plan.duration_ns && *plan.duration_ns == 0)
        return bad("a duration of 0");
    if (plan.stats_outside_windows && plan.mode == CaptureMode::Full)
        return bad("statistics outside windows without a window");
    if (plan.max_bytes > 0 && plan.mode != CaptureMode::Periodic)
        return bad("a size bound without periodic windows");
    return { std::move(plan), {} };
}

CaptureRequest capture_request_from_variables(const std::function<std::string(const char*)>& lookup)
{
    CaptureRequest request;
    request.steps = lookup("FP8SCOPE_CAPTURE_STEPS");
    request.every = lookup("FP8SCOPE_CAPTURE_EVERY");
    request.length = lookup("FP8SCOPE_CAPTURE_LENGTH");
    request.range = lookup("FP8SCOPE_CAPTURE_RANGE");
    request.delay = lookup("FP8SCOPE_CAPTURE_DELAY");
    request.duration = lookup("FP8SCOPE_CAPTURE_DURATION");
    const std::string stats = lookup("FP8SCOPE_STATS_OUTSIDE_WINDOWS");
    request.stats_outside_windows = !stats.empty() && stats != "0";
    request.max_size = lookup("FP8SCOPE_MAX_SIZE_MB");
    return request;
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
