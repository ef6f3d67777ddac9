// Session: one process's recording, from CUDA initialization to the finished trace.
//
// start() runs inside cuInit (InitializeInjection): it subscribes to CUPTI, creates the trace file and the writer
// thread, and enables the activity kinds. stop() flushes CUPTI, lets the writer drain every buffer, and finishes
// the trace. Everything else (atexit, signals, fork, _exit, cudaDeviceReset) only decides when stop() or a flush
// happens (lifecycle.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace fp8scope {
class TraceDb;
struct CaptureWindowRow;
}

namespace fp8scope::collector {

enum class State { Idle, Running, Stopping, Stopped, Disabled };

// Starts recording in this process if it is not recording yet. Never throws; on any failure it prints one
// warning and leaves the process untraced (State::Disabled). Returns true while recording.
bool start_session();

// Flushes and finishes the trace, with `reason` stored as meta finish_reason ("exit", "SIGTERM", ...). Only the
// process that started the session does anything; a second call does nothing.
void stop_session(std::string_view reason);

// Pushes every pending CUPTI record to the writer and commits (cudaDeviceReset).
void flush_session();
// Pushes the records CUPTI has completed to the writer (every 500 ms, from the flusher thread).
void flush_session_periodic();

// In a forked child: never touch the parent's CUPTI state, writer thread or file again.
void abandon_session_after_fork();

State session_state();

struct CuptiApi;
// What tensor statistics (stats_engine.cpp) need from the session, or null unless this process is recording.
struct SessionServices {
    const CuptiApi* cupti = nullptr;
    uint64_t start_cupti_ns = 0; // trace times are CUPTI timestamps minus this
};
const SessionServices* running_session_services();
// The session time now (ns since the session's start, the trace's time base), or -1 when not recording. Read from
// CUPTI's clock, or from CLOCK_REALTIME (the same clock) when CUPTI may be detached between capture windows.
int64_t session_now_ns();
// False while CUPTI is detached between capture windows (or being detached): no CUPTI call may be made then, since
// any would attach it again behind the session's back.
bool cupti_attached();
// The session time at which CUPTI is due to be detached after a window's end, if it is: the flusher wakes then.
std::optional<int64_t> detach_due_ns();
// A detach that is due later becomes due now, and the flusher is woken to do it (a window closed by steps whose grace
// in steps has passed: capture.cpp). No-op when no detach is pending.
void detach_soon();
// Capture windows (capture.cpp): switches the window's activity kinds and traced API calls on or off; pushes the
// completed records to the writer (cuptiActivityFlushAll(0), no wait for the device); writes a window's row (also
// while the session stops). Nothing happens outside the recording process. `recording` (the API calls' flag,
// capture.cpp) goes true before the kinds go on and false right after the kernels' kind goes off.
void set_window_activities(bool on, std::atomic<bool>& recording);
void flush_completed_records();
bool post_capture_window(const CaptureWindowRow& row);

// Runs `task` on the writer thread. False (and nothing runs) when not recording or the queue is full. The task
// writes rows of the job's own making (step markers, scalars, tensor statistics): a sign of GPU work, so the trace
// is kept at the end (idle_trace.hpp).
bool post_to_writer(std::function<void(TraceDb&)> task);
// The same for what the collector notes about the recording (a meta key), which is no sign of GPU work.
bool post_note_to_writer(std::function<void(TraceDb&)> task);

// Windowed recordings with no sign of GPU work yet: looks whether the process holds a CUDA context (CUPTI records
// nothing between windows; idle_trace.hpp). The flusher thread calls it at each wake-up; stop_session once more.
// Does nothing once a sign was seen, for whole-run recordings, and outside the recording process.
void watch_for_gpu_work();

} // namespace fp8scope::collector
