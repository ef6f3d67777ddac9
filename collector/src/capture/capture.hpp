// Capture windows in the running collector (docs/collector.md "Capture windows"): the thin layer between the
// events that can open or close a window (fp8scope_step, NVTX step ranges, cuProfilerStart/Stop, the clock) and
// CUPTI. The decisions are CaptureWindows' (capture_windows.hpp); Capture turns them into the window's activity kinds
// switched on or off, a flush at a window's end and the FP8SCOPE_CAPTURE_WINDOW rows, all through CaptureHost, and
// counts the steps after a window closed by steps before CUPTI is detached (the step-counted grace).
//
// Capture is part of the collector's one object (session/collector.hpp), which is its host; tests give a fake host
// and drive every event without CUPTI or a GPU (tests/collector/capture_test.cpp).
#pragma once

#include "capture/capture_windows.hpp"
#include "capture/steps.hpp"

#include "fp8scope/common/capture_plan.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::collector {

// What Capture needs from the recording session.
class CaptureHost {
public:
    virtual ~CaptureHost() = default;
    // The session time now (ns since its start), or -1 when not recording.
    virtual int64_t now_ns() = 0;
    // Switches the window's activity kinds and traced API calls on or off (CuptiAttachment::open_window and
    // close_window). `recording` (the API calls' flag) goes true before the kinds go on and false right after the
    // kernels' kind goes off. Outside the recording process only the flag changes.
    virtual void switch_window(bool on, std::atomic<bool>& recording) = 0;
    // Pushes the records CUPTI has completed to the writer (cuptiActivityFlushAll(0): no wait for the device).
    virtual void flush_completed_records() = 0;
    // Writes a window's row (also while the session stops); false when it could not be queued.
    virtual bool post_window(const CaptureWindowRow& row) = 0;
    // The first NVTX step range was seen: meta nvtx_step_ranges is written now, so that a window that never opened
    // can be explained even if the job is killed.
    virtual void note_first_nvtx_step_range() = 0;
    // A detach that is due later becomes due now, and the flusher is woken to make it.
    virtual void detach_soon() = 0;
    // The session time at which CUPTI is due to be detached after a window's end, if it is.
    virtual std::optional<int64_t> detach_due_ns() = 0;
    virtual void warn_once(std::string_view key, std::string_view text) = 0;
};

class Capture {
public:
    // Steps begun after a window closed by steps before CUPTI is detached: CUPTI stays attached for the records of the
    // window's kernels still running; kGraceSteps steps later they are long done, and CUPTI is detached then rather
    // than at the 300 ms grace's end, which a fast job's next window may come before (docs/benchmarks.md "A grace
    // counted in steps": 12 ms steps, 17 steps between windows kept CUPTI attached throughout).
    static constexpr int64_t kGraceSteps = 2;
    // A detach that the next window would undo within this many steps is not worth its re-attach: CUPTI stays attached
    // (and the time grace decides).
    static constexpr int64_t kMinDetachedSteps = 3;

    Capture(const Steps& steps, CaptureHost& host);
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;

    // After the session runs: applies the plan (a window that is not open yet switches the activities off). A full
    // capture changes nothing; a second call does nothing.
    void begin(const CapturePlan& plan, int64_t now_ns);
    // Recording ends: a window still open is closed at `now_ns` and its row is written.
    void finish(int64_t now_ns);

    // Events. Each takes the session time it happened at, or reads it from the host.
    void on_marker_step(int64_t step, int64_t now_ns); // fp8scope_step(), after Steps::mark
    // fp8scope_step_end(): step `step` begins, when Steps::begin_optimizer_step let optimizer step ends drive the
    // steps. Ignored once the job has marked a step; NVTX step ranges are ignored from then on.
    void on_optimizer_step(int64_t step, int64_t now_ns);
    // An NVTX step range was pushed (its step: Steps::count_nvtx_range), unless the job's markers or optimizer step
    // ends drive the steps. The window switches before the range reaches CUPTI.
    void on_nvtx_step(int64_t step);
    void on_profiler(bool start); // cuProfilerStart (at its exit) / cuProfilerStop (at its entry)
    void tick(); // the flusher thread, at least by wait_ms()

    // For a recording by steps (steps, periodic) under which no window ever opened: why, in the words of
    // capture_never_opened_text (docs/collector.md "Capture windows"); nullopt otherwise.
    std::optional<std::string> never_opened() const;
    // Whether activities are being recorded now (always, for a full capture). One acquire load.
    bool recording() const { return recording_.load(std::memory_order_acquire); }
    // Whether windows open and close only on steps (a full capture, or windows by steps), not on the clock or
    // cuProfilerStart/Stop: then nothing changes between two steps' beginnings.
    bool edges_on_steps() const { return edges_on_steps_.load(std::memory_order_relaxed); }
    // Whether tensor statistics may be taken now: inside a window, or always with --stats-outside-windows.
    bool allows_stats() const
    {
        return recording_.load(std::memory_order_relaxed) || stats_outside_.load(std::memory_order_relaxed);
    }
    // How long the flusher may sleep: `period_ms` (-1: forever), cut to the time window's next edge and to a detach
    // that is due.
    int wait_ms(int period_ms) const;
    // Steps begun since a window closed by steps while its detach waits for them; nullopt when none waits.
    std::optional<int64_t> grace_steps() const;

private:
    void apply(CaptureChange change);
    void on_step(CaptureChange change, int64_t step);

    const Steps& steps_;
    CaptureHost& host_;
    // Window events are rare (steps, profiler calls, the clock): a mutex is cheap enough, and two threads cannot
    // switch the activities in the opposite order of their decisions.
    mutable std::mutex mutex_;
    std::optional<CaptureWindows> windows_; // made by begin() for a windowed plan
    std::atomic<bool> windowed_ { false }; // windows_ is made: NVTX step ranges are followed
    std::atomic<bool> recording_ { true };
    std::atomic<bool> stats_outside_ { false };
    std::atomic<bool> edges_on_steps_ { true };
    // Steps begun since a window closed on a step, while its detach is pending (-1: none pending). Under mutex_.
    int64_t steps_since_close_ = -1;
};

} // namespace fp8scope::collector
