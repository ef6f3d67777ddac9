// The collector's capture windows as a pure state machine (docs/collector.md "Capture windows"): it is told about
// steps, cudaProfilerStart/Stop and the time, and answers whether a window opened or closed. It makes no CUPTI
// call; capture.cpp turns its answers into cuptiActivityEnable/Disable, a flush and a FP8SCOPE_CAPTURE_WINDOW row.
// Not thread-safe: capture.cpp calls it under one mutex.
#pragma once

#include "fp8scope/common/capture_plan.hpp"
#include "fp8scope/format/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace fp8scope::collector {

struct CaptureChange {
    enum class Kind { None, Opened, Closed };
    Kind kind = Kind::None;
    CaptureWindowRow window; // for Opened: end_ns unset; for Closed: complete
    bool opened() const { return kind == Kind::Opened; }
    bool closed() const { return kind == Kind::Closed; }
};

class CaptureWindows {
public:
    explicit CaptureWindows(CapturePlan plan);

    const CapturePlan& plan() const { return plan_; }
    // Whether activities should be recorded now: always for a full capture, else inside a window.
    bool capturing() const { return plan_.mode == CaptureMode::Full || open_; }

    // The collector starts recording (session time `now_ns`): a time window with no delay opens here.
    CaptureChange start(int64_t now_ns);
    // Step `step` begins (fp8scope_step(), or an NVTX step range). Opens or closes a steps or periodic window; in
    // every mode it is noted as the open window's first or last step.
    CaptureChange step(int64_t step, int64_t now_ns);
    // cudaProfilerStart / cudaProfilerStop (cuProfilerStart/Stop): open and close a profiler window. A start inside
    // a window or a stop outside one changes nothing.
    CaptureChange profiler_start(int64_t now_ns);
    CaptureChange profiler_stop(int64_t now_ns);
    // The clock reached `now_ns`: opens or closes the time window.
    CaptureChange tick(int64_t now_ns);
    // Recording ends: closes a window that is still open.
    CaptureChange finish(int64_t now_ns);

    // When tick() next has something to do (session time), nullopt when never.
    std::optional<int64_t> next_deadline_ns() const;
    // Whether a steps or periodic window opens at one of the `count` steps after `step` (time and profiler windows:
    // false, they are not foreseen).
    bool opens_within(int64_t step, int64_t count) const;

    // Whether a window has opened at any time.
    bool ever_opened() const { return next_id_ > 1; }
    // The lowest and highest step told to step(); none before the first.
    std::optional<StepsSeen> steps_seen() const { return steps_seen_; }
    // For a plan that opens windows on steps (steps, periodic) under which none ever opened: why, as
    // capture_never_opened_text says it. Nullopt for other plans, or once a window has opened.
    std::optional<std::string> never_opened_text() const;

private:
    CaptureChange open(int64_t now_ns, std::optional<int64_t> first_step);
    CaptureChange close(int64_t now_ns);
    schema::CaptureTrigger trigger() const;

    CapturePlan plan_;
    bool open_ = false;
    bool time_window_done_ = false; // the one time window has opened (and maybe closed)
    int64_t next_id_ = 1;
    CaptureWindowRow current_;
    std::optional<StepsSeen> steps_seen_;
};

} // namespace fp8scope::collector
