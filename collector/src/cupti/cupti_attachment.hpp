// CuptiAttachment: whether CUPTI is attached to the process, and detaching it between capture windows
// (docs/collector.md, "Capture windows").
//
// CUPTI, once it has traced a process, still costs every launch something with every activity kind off
// (docs/benchmarks.md, "Capture windows on the H100"); detached, it costs nothing. As cupti.h asks, cuptiFinalize is
// called at the exit of a CUDA call (Kineto does the same), once the window's records are written; the next window
// subscribes again (CUPTI initializes itself again at its first call).
//
// States. Attached: CUPTI works as the session set it up. Draining: a window has ended and the flusher waits for the
// writer to decode its records; buffers CUPTI completes from then on are counted, not posted (buffer_completed).
// Armed: they are decoded; the next CUDA call's exit calls cuptiFinalize. Only Armed lets a callback finalize: a
// callback that fires while the writer still needs CUPTI to decode (cudaDeviceReset's, enabled for the whole session)
// must not. Detached: cuptiFinalize succeeded; the next window attaches CUPTI again.
//
// Every call reaches CUPTI through the CuptiApi table and the session through AttachmentHost, both injected: no CUDA
// call, so unit tests drive every transition with fakes (tests/collector/cupti_attachment_test.cpp).
#pragma once

#include "cupti/cupti_api.hpp"
#include "cupti/cupti_settings.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::collector {

// What the state machine needs from the session besides CUPTI (session_start.cpp; tests give a fake).
class AttachmentHost {
public:
    virtual ~AttachmentHost() = default;
    // The session time now (ns since the session's start): from CLOCK_REALTIME while CUPTI may be detached.
    virtual int64_t now_ns() = 0;
    // Whether a capture window is open (Capture::recording()).
    virtual bool window_open() = 0;
    // The API records the callbacks hold, to the writer (api_calls.hpp).
    virtual void flush_api_records() = 0;
    // Waits (5 s at most) until the writer has decoded every buffer posted so far; false when it did not.
    virtual bool wait_for_writer() = 0;
    // Queues RecordDecoder::start_correlation_generation on the writer; false when its queue is full.
    virtual bool start_correlation_generation() = 0;
    // Whether the wrapped NVTX calls go on to CUPTI's NVTX implementation (nvtx_paths.hpp).
    virtual void set_nvtx_forwarding(bool on) = 0;
    // False in a forked child, which never touches the parent's CUPTI.
    virtual bool in_owner_process() = 0;
    // True until the process's first CUDA context is being made (KernelTimestampChoice::waiting): no detach before
    // then, or the context would be made without CUPTI, which then neither asks for the hardware event trace nor
    // sends the DEVICE records (a windowed trace without its GPUs: H200, 2026-11-30).
    virtual bool context_pending() = 0;
    virtual void inform(std::string_view text) = 0; // warn.hpp
    virtual void warn_once(std::string_view key, std::string_view text) = 0;
};

// The functions CUPTI calls back, given again each time CUPTI is attached again.
struct CuptiCallbacks {
    CUpti_CallbackFunc api = nullptr;
    void* api_userdata = nullptr; // what `api` is given as its first argument (the collector)
    CUpti_BuffersCallbackRequestFunc buffer_requested = nullptr;
    CUpti_BuffersCallbackCompleteFunc buffer_completed = nullptr;
};

class CuptiAttachment {
public:
    enum class State : uint8_t { Attached, Draining, Armed, Detached };
    // How long after a window's end CUPTI stays attached, for the records of kernels still running then.
    static constexpr int64_t kDetachGraceNs = 300'000'000;

    // `settings` is filled by the session's start (enable_activities) before any window opens.
    CuptiAttachment(
        const CuptiApi& cupti, const CuptiSettings& settings, CuptiCallbacks callbacks, AttachmentHost& host);
    CuptiAttachment(const CuptiAttachment&) = delete;
    CuptiAttachment& operator=(const CuptiAttachment&) = delete;

    // The session's start: subscribes as "fp8scope". False, with `why_not` the reason this process is not traced,
    // when another tool holds CUPTI (CUPTI admits one subscriber) or subscribing failed.
    bool subscribe(std::string& why_not);
    // Null when not subscribed (FP8SCOPE_SUBSCRIBE=0, a failed subscribe) or while detached.
    CUpti_SubscriberHandle subscriber() const { return subscriber_; }

    State state() const { return state_.load(std::memory_order_acquire); }
    bool attached() const { return state() == State::Attached; }
    // Between a window's end and cuptiFinalize: a window that opens, or the end of recording, takes CUPTI back as it
    // is.
    bool detaching() const;
    // Counts attachments; a CUPTI attached again starts afresh (per-thread call nesting, api_calls.hpp).
    uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

    // A capture window opens: `recording` (the API calls' flag) goes true, CUPTI is taken back (a detach pending is
    // called off; a detached CUPTI is attached again), then the API calls and the window's kinds go on, the kernels'
    // kind first.
    void open_window(std::atomic<bool>& recording);
    // A capture window closes: the window's kinds go off, the kernels' kind last, `recording` goes false right after
    // it, then the API calls go off and their records are flushed; the detach is due kDetachGraceNs later.
    void close_window(std::atomic<bool>& recording);

    // cuptiActivityFlushAll(flags) if CUPTI is attached; false (nothing called) when it is not.
    bool flush_if_attached(uint32_t flags);
    // The end of recording: a pending detach is called off, and an attached CUPTI flushes everything.
    void flush_at_stop();

    // The session time at which the flusher arms the detach, if one is pending.
    std::optional<int64_t> detach_due_ns() const;
    // A detach due later becomes due at `now_ns`; true when the flusher must be woken to make it.
    bool detach_soon(int64_t now_ns);
    // The flusher, at each wake-up: once the detach is due and no window is open, drains the writer and arms it.
    void arm_detach_when_due();
    // A runtime or driver API callback's share (on_callback): a graph call is noted; while a detach is armed, the
    // call's exit detaches CUPTI. True while armed: the callback then does nothing else.
    bool on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site);
    // CUPTI stays attached for good: cuptiFinalize failed once, the job uses CUDA graphs, or keep_attached().
    bool detach_ruled_out() const { return detach_failed_.load() || must_stay(); }
    // CUPTI's hardware event trace was taken (kernel_timestamps.hpp): it cannot be turned off, so no detach.
    void keep_attached() { kept_attached_.store(true); }

private:
    CUptiResult subscribe_as_fp8scope(char (&holder)[256]);
    void set_domains(uint32_t on);
    void stay_attached();
    void detach_at_api_exit();
    bool attach_again();
    void switch_window_kinds(bool on);
    void switch_window_api(bool on);

    const CuptiApi& cupti_;
    const CuptiSettings& settings_;
    const CuptiCallbacks callbacks_;
    AttachmentHost& host_;
    CUpti_SubscriberHandle subscriber_ = nullptr;
    std::atomic<State> state_ { State::Attached };
    // Orders cuptiFinalize against our other CUPTI calls from other threads (the flusher's flush, attaching again),
    // which must never race it.
    std::mutex mutex_;
    std::atomic<int64_t> detach_due_ns_ { -1 }; // session time after which the flusher arms the detach; -1: none
    std::atomic<bool> detach_failed_ { false }; // cuptiFinalize failed once: CUPTI stays attached
    // The job instantiated, uploaded or launched a CUDA graph while CUPTI was attached: CUPTI then stays attached. On
    // the H100 (2026-11-27) a cuptiFinalize after a window whose steps replayed CUDA graphs made the job's next
    // launches fail (CUDA_ERROR_LAUNCH_FAILED) in a PyTorch CUDA-graph step and in JAX, whatever records were on;
    // eager jobs were unharmed. So a graph call seen once rules out detaching for the rest of the session.
    std::atomic<bool> graphs_seen_ { false };
    std::atomic<bool> kept_attached_ { false }; // keep_attached()
    bool must_stay() const { return graphs_seen_.load() || kept_attached_.load(); }
    std::atomic<uint64_t> generation_ { 1 };
};

} // namespace fp8scope::collector
