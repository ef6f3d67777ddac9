#include "trace_info/capture_render.hpp"

#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"

#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {
namespace {

constexpr size_t kWindowsInText = 5; // a periodic capture of a long job has thousands: the first few, then a count

std::string steps_text(const analyzer::CaptureWindow& w)
{
    if (!w.first_step)
        return "no step began in it";
    if (*w.first_step == *w.last_step)
        return fmt::format("step {}", *w.first_step);
    return fmt::format("steps {} to {}", *w.first_step, *w.last_step);
}

std::string trigger_name(int32_t trigger)
{
    const std::string_view name = schema::enum_name("ENUM_FP8SCOPE_CAPTURE_TRIGGER", trigger);
    return name.empty() ? fmt::format("{}", trigger) : std::string(name);
}

} // namespace

std::string capture_sentence(const analyzer::CaptureInfo& capture)
{
    if (!capture.windowed)
        return "whole run";
    std::string line = printable(capture.mode);
    if (!capture.options.empty())
        line += fmt::format(" ({})", printable(capture.options));
    if (capture.windows.empty())
        return line + ": no window was opened, nothing was captured";
    line += fmt::format(": {} {}", capture.windows.size(), capture.windows.size() == 1 ? "window" : "windows");
    if (capture.windows_dropped > 0)
        line += fmt::format(" kept ({} older {} dropped to stay under {} MiB)", capture.windows_dropped,
            capture.windows_dropped == 1 ? "one" : "ones", capture.max_bytes >> 20);
    for (size_t i = 0; i < capture.windows.size() && i < kWindowsInText; ++i) {
        const analyzer::CaptureWindow& w = capture.windows[i];
        line += fmt::format("{} {} to {} ({})", i == 0 ? ":" : ";", format_duration_ns(w.start_ns),
            w.open_at_end ? std::string("the trace's end") : format_duration_ns(w.end_ns), steps_text(w));
    }
    if (capture.windows.size() > kWindowsInText)
        line += fmt::format("; {} more", capture.windows.size() - kWindowsInText);
    return line;
}

nlohmann::ordered_json capture_json(const analyzer::CaptureInfo& capture)
{
    using json = nlohmann::ordered_json;
    json windows = nullptr;
    if (capture.windowed) {
        windows = json::array();
        for (const analyzer::CaptureWindow& w : capture.windows)
            windows.push_back({ { "id", w.id }, { "start_ns", w.start_ns },
                { "end_ns", w.open_at_end ? json(nullptr) : json(w.end_ns) }, { "open_at_end", w.open_at_end },
                { "first_step", w.first_step ? json(*w.first_step) : json(nullptr) },
                { "last_step", w.last_step ? json(*w.last_step) : json(nullptr) },
                { "trigger", trigger_name(w.trigger) } });
    }
    json out { { "mode", capture.windowed ? capture.mode : std::string("full") }, { "options", capture.options },
        { "windows", windows } };
    if (capture.max_bytes > 0) { // a bounded recording only: other traces' JSON is as before
        out["max_bytes"] = capture.max_bytes;
        out["windows_dropped"] = capture.windows_dropped;
    }
    return out;
}

} // namespace fp8scope::cli
