// Collector: the collector's one object (docs/collector.md "The collector as one object"). It owns everything
// mutable: the recording session (CUPTI, the writer, the decoder), the steps, the capture windows and their grace,
// the NVTX forwarding, the signs of GPU work and the lifecycle's pipes. It is made once, by the first entry point that
// needs it (entry/injection.cpp), and never destroyed: CUPTI may call back until the process is gone, and a forked
// child must not run destructors that touch the parent's writer thread or file. The C callbacks reach it through
// the one pointer Collector::get() reads; everything else takes it by reference.
//
// What it needs from the library around it (CUPTI's loading, the lifecycle's threads and handlers, the statistics
// kernels, the CUDA driver) comes through CollectorPlatform, so that unit tests make a Collector with a fake CUPTI
// table and a fake clock and drive it without a GPU (tests/collector/collector_test.cpp).
#pragma once

#include "calls/nvtx_paths.hpp"
#include "capture/capture.hpp"
#include "capture/steps.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope {
class TraceDb;
}

namespace fp8scope::collector {

struct CuptiApi;
struct Session;
class Collector;
namespace stats {
struct Engine;
}

enum class State { Idle, Running, Stopping, Stopped, Disabled };

// What the collector needs from the library around it: libfp8scope.so gives the real ones (entry/injection.cpp),
// tests fakes.
class CollectorPlatform {
public:
    virtual ~CollectorPlatform() = default;
    // CUPTI, loaded once (cupti_api.hpp: load_cupti); null, with `error` one line, when it cannot be.
    virtual const CuptiApi* load_cupti(std::string& error) = 0;
    // The session runs: atexit, fork and signal handlers, the flusher and watchdog threads (lifecycle.hpp).
    virtual void started(Collector& collector) = 0;
    // Writer thread: the rows of the tensor statistics finished so far (stats_engine.hpp); `final` at the end.
    virtual void harvest_tensor_stats(TraceDb& db, bool final) = 0;
    // Whether the process holds a CUDA context now (cuda_context.hpp); nullopt when the driver cannot be asked.
    virtual std::optional<bool> cuda_context_active() = 0;
};

// The lifecycle's pipes (lifecycle.cpp): the flusher's wake-up (a signal's number, or 0 from wake_flusher) and the
// watchdog's. -1 until the lifecycle hooks are installed.
struct LifecyclePipes {
    int wake[2] = { -1, -1 };
    int watch[2] = { -1, -1 };
    std::atomic<int> pending_signal { 0 };
};

class Collector {
public:
    explicit Collector(CollectorPlatform& platform);
    ~Collector(); // tests only: the library's collector is never destroyed
    Collector(const Collector&) = delete;
    Collector& operator=(const Collector&) = delete;

    // The process's collector (the one pointer the C callbacks need), null until publish(). An acquire load.
    static Collector* get();
    // Makes `collector` the process's; once, from the entry point that makes it (entry/injection.cpp).
    static void publish(Collector& collector);

    // ---- the session (session_start.cpp, collector.cpp)

    // Starts recording in this process if it is not recording yet. Never throws; on any failure it prints one
    // warning and leaves the process untraced (State::Disabled). Returns true while recording.
    bool start();
    // Flushes and finishes the trace, with `reason` stored as meta finish_reason ("exit", "SIGTERM", ...). Only the
    // process that started the session does anything; a second call does nothing.
    void stop(std::string_view reason);
    // Pushes every pending CUPTI record to the writer and commits (cudaDeviceReset).
    void flush();
    // Pushes the records CUPTI has completed to the writer (every 500 ms, from the flusher thread).
    void flush_periodic();
    // In a forked child: never touch the parent's CUPTI state, writer thread or file again.
    void abandon_after_fork();
    State state() const { return state_.load(std::memory_order_acquire); }

    // The session while it runs, in the process that started it; null otherwise.
    Session* running_session();
    // The session once made (whatever its state, in any process), for the CUPTI callbacks; null before.
    Session* session() const { return session_.load(std::memory_order_acquire); }
    // The session time now (ns since the session's start, the trace's time base), or -1 when not recording. Read
    // from CUPTI's clock, or from CLOCK_REALTIME (the same clock) when CUPTI may be detached between capture windows.
    int64_t now_ns();
    // A CUPTI timestamp (ns) of the session `s`: CUPTI's clock, or CLOCK_REALTIME when CUPTI may be detached.
    uint64_t timestamp_now(const Session& s);
    // False while CUPTI is detached between capture windows (or being detached): no CUPTI call may be made then, since
    // any would attach it again behind the session's back.
    bool cupti_attached() const;
    // The session time at which CUPTI is due to be detached after a window's end, if it is: the flusher wakes then.
    std::optional<int64_t> detach_due_ns() const;
    // A detach that is due later becomes due now, and the flusher is woken to do it. No-op when none is pending.
    void detach_soon();
    // Wakes the flusher thread now (a zero byte on its wake pipe); no-op before the lifecycle hooks exist.
    void wake_flusher();

    // Runs `task` on the writer thread. False (and nothing runs) when not recording or the queue is full. The task
    // writes rows of the job's own making (step markers, scalars, tensor statistics): a sign of GPU work, so the trace
    // is kept at the end (idle_trace.hpp).
    bool post_rows(std::function<void(TraceDb&)> task);
    // The same for what the collector notes about the recording (a meta key), which is no sign of GPU work.
    bool post_note(std::function<void(TraceDb&)> task);

    // Windowed recordings with no sign of GPU work yet: looks whether the process holds a CUDA context (CUPTI records
    // nothing between windows; idle_trace.hpp). The flusher thread calls it at each wake-up; stop() once more. Does
    // nothing once a sign was seen, for whole-run recordings, and outside the recording process.
    void watch_for_gpu_work();

    // ---- the parts
    Steps& steps() { return steps_; }
    Capture& capture() { return capture_; }
    NvtxForwarding& nvtx() { return nvtx_; }
    LifecyclePipes& lifecycle() { return lifecycle_; }
    CollectorPlatform& platform() { return platform_; }
    // The statistics engine, made by stats/ on the first probe that needs it and never freed (probes may arrive
    // during exit); the collector only holds it.
    std::atomic<stats::Engine*>& stats_engine() { return stats_engine_; }

private:
    // What Capture needs of the session (capture.hpp).
    class CaptureSide final : public CaptureHost {
    public:
        explicit CaptureSide(Collector& c)
            : c_(c)
        {
        }
        int64_t now_ns() override { return c_.now_ns(); }
        void switch_window(bool on, std::atomic<bool>& recording) override;
        void flush_completed_records() override;
        bool post_window(const CaptureWindowRow& row) override;
        void note_first_nvtx_step_range() override;
        void detach_soon() override { c_.detach_soon(); }
        std::optional<int64_t> detach_due_ns() override { return c_.detach_due_ns(); }
        void warn_once(std::string_view key, std::string_view text) override;

    private:
        Collector& c_;
    };

    bool start_locked(); // session_start.cpp
    bool in_owner(const Session& s) const;
    bool remove_if_idle(const Session& s);
    void warn_if_no_window_opened(const Session& s);

    CollectorPlatform& platform_;
    std::atomic<State> state_ { State::Idle };
    std::atomic<Session*> session_ { nullptr };
    std::mutex start_mutex_;
    std::mutex stop_mutex_;
    Steps steps_;
    CaptureSide capture_side_ { *this };
    Capture capture_ { steps_, capture_side_ };
    NvtxForwarding nvtx_;
    LifecyclePipes lifecycle_;
    std::atomic<stats::Engine*> stats_engine_ { nullptr };
    // Signs of GPU work besides the decoded rows (idle_trace.hpp): the job wrote rows through the collector (markers,
    // scalars, statistics), and what the looks for a CUDA context found (windowed recordings only).
    std::atomic<bool> job_wrote_rows_ { false };
    enum class ContextSeen : uint8_t { NotAsked, None, Seen };
    std::atomic<ContextSeen> context_seen_ { ContextSeen::NotAsked };
};

} // namespace fp8scope::collector
