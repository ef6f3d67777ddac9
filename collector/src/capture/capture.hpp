// Capture windows in the running collector (docs/collector.md "Capture windows"): the thin layer between the
// events that can open or close a window (fp8scope_step, NVTX step ranges, cuProfilerStart/Stop, the clock) and
// CUPTI. The decisions are CaptureWindows' (capture_windows.hpp); this file switches the window's activity kinds
// on and off (cupti_attachment.cpp), flushes at a window's end and writes the FP8SCOPE_CAPTURE_WINDOW rows.
#pragma once

#include "fp8scope/common/capture_plan.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace fp8scope::collector {

// The plan from the FP8SCOPE_CAPTURE_* variables; a bad value gives one warning and a full capture.
CapturePlan capture_plan_from_environment();

// After the session runs: applies the plan (a window that is not open yet switches the activities off).
void capture_begin(const CapturePlan& plan, int64_t now_ns);
// Recording ends: a window still open is closed at `now_ns` and its row is written.
void capture_finish(int64_t now_ns);

// Events. Each takes the session time it happened at.
void capture_on_marker_step(int64_t step, int64_t now_ns); // fp8scope_step()
// fp8scope_step_end(): step `step` begins at an optimizer step end, when begin_optimizer_step (stats_engine.hpp) let
// it drive the steps. Ignored once the job has marked a step; NVTX step ranges are ignored from then on.
void capture_on_optimizer_step(int64_t step, int64_t now_ns);
void capture_on_profiler(bool start); // cuProfilerStart (at its exit) / cuProfilerStop (at its entry)
void capture_tick(); // the flusher thread, at least by capture_wait_ms()

// For a recording by steps (steps, periodic) under which no window ever opened: why, in the words of
// capture_never_opened_text (docs/collector.md "Capture windows"); nullopt otherwise.
std::optional<std::string> capture_never_opened();

// Whether activities are being recorded now (always, for a full capture). One relaxed atomic load.
bool capture_recording();
// Whether tensor statistics may be taken now: inside a window, or always with --stats-outside-windows.
bool capture_allows_stats();
// How long the flusher may sleep: `period_ms` (-1: forever), cut to the time window's next edge.
int capture_wait_ms(int period_ms);

} // namespace fp8scope::collector
