// What a windowed recording captures (docs/collector.md "Capture windows"): steps A..B, K steps of every N,
// cudaProfilerStart/Stop, or a time range from the collector's start. `fp8scope record` parses its --capture-*
// options once, here, and passes the plan itself to the collector (FP8SCOPE_CAPTURE_PLAN, serialize_capture_plan());
// a job run without `record` may set the FP8SCOPE_CAPTURE_* variables by hand, which the collector parses with the
// same code (capture_request_from_variables(), the one list of their names).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope {

enum class CaptureMode { Full, Steps, Periodic, ProfilerApi, Time };

struct CapturePlan {
    CaptureMode mode = CaptureMode::Full;
    int64_t first_step = 0, last_step = 0; // Steps: A..B inclusive
    int64_t every = 0, length = 0; // Periodic: steps with (step mod every) < length
    int64_t delay_ns = 0; // Time: from delay_ns after the collector's start ...
    std::optional<int64_t> duration_ns; // ... for duration_ns (to the end of the run when unset)
    bool stats_outside_windows = false; // tensor statistics also outside the windows
    // Periodic only: the oldest windows are deleted while the trace's pages in use exceed this (0: no bound;
    // TraceDb::drop_oldest_windows, docs/collector.md "Monitoring").
    int64_t max_bytes = 0;
    std::string options; // the options as given, e.g. "--capture-steps 20:29" (meta capture_options)

    // Meta capture_mode: "full", "steps", "periodic", "cudaProfilerApi", "time".
    std::string_view mode_name() const;
    // Periodic: whether step `step` lies in a window.
    bool in_periodic_window(int64_t step) const { return step >= 0 && step % every < length; }
};

// The values as given, one per option (empty: not given). The CLI fills it from its options, the collector from
// the FP8SCOPE_CAPTURE_* variables; both spell the option names in messages as the CLI does.
struct CaptureRequest {
    std::string steps = {}; // --capture-steps / FP8SCOPE_CAPTURE_STEPS: "A:B"
    std::string every = {}; // --capture-every / FP8SCOPE_CAPTURE_EVERY: N
    std::string length = {}; // --capture-length / FP8SCOPE_CAPTURE_LENGTH: K
    std::string range = {}; // --capture-range / FP8SCOPE_CAPTURE_RANGE: "cudaProfilerApi"
    std::string delay = {}; // --delay / FP8SCOPE_CAPTURE_DELAY: seconds
    std::string duration = {}; // --duration / FP8SCOPE_CAPTURE_DURATION: seconds
    bool stats_outside_windows = false; // --stats-outside-windows / FP8SCOPE_STATS_OUTSIDE_WINDOWS=1
    std::string max_size = {}; // --max-size / FP8SCOPE_MAX_SIZE_MB: MiB, with periodic windows only
};

// The plan, or one line saying what is wrong (a bad value, or options that make no sense together).
struct CapturePlanResult {
    std::optional<CapturePlan> plan;
    std::string error;
};
CapturePlanResult parse_capture_plan(const CaptureRequest& request);

// The variable `fp8scope record` passes the parsed plan in; the collector reads it before the hand-set variables.
inline constexpr std::string_view kCapturePlanVariable = "FP8SCOPE_CAPTURE_PLAN";
// A plan as one line of text: "fp8scope-capture-plan/1 mode=steps first=20 last=29 every=0 length=0 delay_ns=0
// duration_ns=- stats_outside=0 options=--capture-steps 20:29" (options last: it holds blanks). A bounded plan has
// " max_bytes=N" before options=.
std::string serialize_capture_plan(const CapturePlan& plan);
// The plan from serialize_capture_plan()'s text, every field checked (an environment variable is untrusted); a text
// that is not one gives the error, which the collector turns into one warning and a full capture.
CapturePlanResult deserialize_capture_plan(std::string_view text);
// The FP8SCOPE_CAPTURE_* and FP8SCOPE_STATS_OUTSIDE_WINDOWS variables, read through `lookup` (getenv, "" when unset):
// what a job run without `record` may set by hand (docs/collector.md). The one place their names are written.
CaptureRequest capture_request_from_variables(const std::function<std::string(const char*)>& lookup);

// The steps a recording saw begin (fp8scope_step() markers, else NVTX step ranges counted from 0).
struct StepsSeen {
    int64_t first = 0, last = 0;
    bool last_is_lower_bound = false; // an unfinished trace that counted NVTX step ranges: how many is unknown
};

// Why a recording by steps (capture mode "steps" or "periodic") never opened a window: the one sentence that the
// collector's exit warning, `record`'s summary and `info` print (docs/collector.md "Capture windows"). `options`:
// meta capture_options; `steps`: none when the job marked no step at all, the usual cause.
std::string capture_never_opened_text(std::string_view options, const std::optional<StepsSeen>& steps);

// The largest step number and time the options accept (time: 10^6 s, well inside the trace's time range).
inline constexpr int64_t kMaxCaptureStep = int64_t { 1 } << 48;
inline constexpr double kMaxCaptureSeconds = 1e6;
// The size bound --max-size accepts, in MiB: from 16 MiB (a few windows of a large job) to 1 TiB.
inline constexpr int64_t kMinMaxSizeMib = 16, kMaxMaxSizeMib = int64_t { 1 } << 20;

} // namespace fp8scope
