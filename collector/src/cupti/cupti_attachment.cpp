#include "cupti/cupti_attachment.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace fp8scope::collector {

CuptiAttachment::CuptiAttachment(
    const CuptiApi& cupti, const CuptiSettings& settings, CuptiCallbacks callbacks, AttachmentHost& host)
    : cupti_(cupti)
    , settings_(settings)
    , callbacks_(callbacks)
    , host_(host)
{
}

bool CuptiAttachment::detaching() const
{
    const State s = state();
    return s == State::Draining || s == State::Armed;
}

// ---- Subscribing

// cuptiSubscribe(_v2) with the session's callback; `holder` receives the name of a tool that already holds CUPTI (v2
// only).
CUptiResult CuptiAttachment::subscribe_as_fp8scope(char (&holder)[256])
{
    if (!cupti_.subscribeV2)
        return cupti_.subscribe(&subscriber_, callbacks_.api, callbacks_.api_userdata);
    CUpti_SubscriberParams params {};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "fp8scope";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof holder;
    return cupti_.subscribeV2(&subscriber_, callbacks_.api, callbacks_.api_userdata, &params);
}

bool CuptiAttachment::subscribe(std::string& why_not)
{
    char holder[256] = {};
    const CUptiResult result = subscribe_as_fp8scope(holder);
    if (result == CUPTI_SUCCESS)
        return true;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        const std::string who = holder[0] ? std::string(holder) : std::string("another profiler");
        // CUPTI admits one profiling tool per process (nsys, ncu, torch.profiler, fp8scope).
        why_not = "CUPTI is already in use by " + who + ", and CUPTI admits one profiling tool per process";
    } else {
        why_not = std::string("cuptiSubscribe failed: ") + cupti_.result_name(result);
    }
    return false;
}

// ---- Capture windows

void CuptiAttachment::open_window(std::atomic<bool>& recording)
{
    // API calls on before the kernels and off right after them: a launch racing the switch (a time window is
    // switched by the flusher thread) then leaves at most a call without its kernel, never a kernel without its
    // launch (H100, 2026-11-24: 1 of 37,388 kernels in a time window had no launch call when the kinds came first;
    // 2026-11-27: 5 launch calls without their kernel at one edge while the flag waited for every other kind and
    // the API flush to be switched too).
    std::lock_guard lock(mutex_);
    detach_due_ns_.store(-1);
    if (detaching()) {
        stay_attached();
    } else if (state() == State::Detached) {
        const auto started = std::chrono::steady_clock::now();
        // CUPTI could not be attached again (attach_again warned): the window records nothing, and no API call is
        // kept without its kernel.
        if (!attach_again())
            return;
        state_.store(State::Attached, std::memory_order_release);
        host_.inform("capture: CUPTI attached again in "
            + std::to_string(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count())
            + " ms");
    }
    recording.store(true);
    switch_window_api(true);
    switch_window_kinds(true);
}

void CuptiAttachment::close_window(std::atomic<bool>& recording)
{
    std::lock_guard lock(mutex_);
    if (state() == State::Detached) {
        // The window opened without CUPTI (attaching again failed): no CUPTI call while detached, which would
        // start CUPTI again behind the session's back.
        recording.store(false);
        host_.flush_api_records();
        return;
    }
    switch_window_kinds(false);
    recording.store(false);
    switch_window_api(false);
    host_.flush_api_records();
    // CUPTI is detached once the window's records are in (arm_detach_when_due): kernels still running now were
    // launched inside it, and their records come with the next flushes.
    if (settings_.detach_between_windows && !detach_ruled_out())
        detach_due_ns_.store(host_.now_ns() + kDetachGraceNs);
}

// The activity kinds a window switches (CuptiSettings::window_kinds).
// The kernels' kind is first in the list: it goes on first and off last, so that the API calls' flag (switched
// around this call) is never on without it for longer than one enable or disable.
void CuptiAttachment::switch_window_kinds(bool on)
{
    const auto switch_kind = [&](CUpti_ActivityKind kind) {
        const CUptiResult result = on ? cupti_.activityEnable(kind) : cupti_.activityDisable(kind);
        if (result != CUPTI_SUCCESS)
            host_.warn_once(on ? "capture-enable" : "capture-disable",
                std::string("cannot switch CUPTI activity kind ") + std::to_string(static_cast<int>(kind))
                    + (on ? " on" : " off") + " for a capture window: " + cupti_.result_name(result));
    };
    if (on)
        std::for_each(settings_.window_kinds.begin(), settings_.window_kinds.end(), switch_kind);
    else
        std::for_each(settings_.window_kinds.rbegin(), settings_.window_kinds.rend(), switch_kind);
}

// The traced API calls a window switches.
void CuptiAttachment::switch_window_api(bool on)
{
    if (settings_.api_all_kinds) {
        for (CUpti_ActivityKind kind : { CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER })
            on ? cupti_.activityEnable(kind) : cupti_.activityDisable(kind);
        return;
    }
    if (settings_.runtime_cbids.empty() && settings_.driver_cbids.empty())
        return; // FP8SCOPE_API=none
    if (settings_.api_from_callbacks)
        return; // the callbacks keep a call only inside a window (on_api_call)
    // Switching the traced calls' ids off and on again one by one leaves CUPTI 13.0 recording no API call at all
    // after the first window opens (H100, 2026-11-24: 0 runtime rows in every windowed trace). So a window opens the
    // way cupti_activity.h documents for "all but a few": the whole RUNTIME and DRIVER kinds on, then every id the
    // analysis does not use off; it closes with both kinds off, and the traced ids off too, for the ids switched on
    // one by one at start.
    const auto switch_domain = [&](CUpti_ActivityKind kind, const std::vector<uint32_t>& traced, uint32_t id_count,
                                   CUptiResult (*enable_id)(CUpti_CallbackId, uint8_t)) {
        if (on) {
            cupti_.activityEnable(kind);
            std::vector<bool> keep(id_count, false);
            for (uint32_t cbid : traced)
                if (cbid < id_count)
                    keep[cbid] = true;
            for (uint32_t cbid = 1; cbid < id_count; ++cbid)
                enable_id(cbid, keep[cbid] ? 1 : 0);
        } else {
            for (uint32_t cbid : traced)
                enable_id(cbid, 0);
            cupti_.activityDisable(kind);
        }
    };
    switch_domain(CUPTI_ACTIVITY_KIND_RUNTIME, settings_.runtime_cbids, CUPTI_RUNTIME_TRACE_CBID_SIZE,
        cupti_.activityEnableRuntimeApi);
    switch_domain(CUPTI_ACTIVITY_KIND_DRIVER, settings_.driver_cbids, CUPTI_DRIVER_TRACE_CBID_SIZE,
        cupti_.activityEnableDriverApi);
}

// ---- Flushing

bool CuptiAttachment::flush_if_attached(uint32_t flags)
{
    std::lock_guard lock(mutex_);
    if (!attached())
        return false;
    cupti_.activityFlushAll(flags);
    return true;
}

void CuptiAttachment::flush_at_stop()
{
    std::lock_guard lock(mutex_);
    if (detaching())
        stay_attached();
    if (attached())
        cupti_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

// ---- Detaching between windows

std::optional<int64_t> CuptiAttachment::detach_due_ns() const
{
    const int64_t due = detach_due_ns_.load();
    return due >= 0 ? std::optional(due) : std::nullopt;
}

bool CuptiAttachment::detach_soon(int64_t now_ns)
{
    int64_t due = detach_due_ns_.load();
    if (now_ns < 0 || due < 0 || due <= now_ns)
        return false;
    while (due > now_ns && !detach_due_ns_.compare_exchange_weak(due, now_ns)) { }
    return due >= 0;
}

void CuptiAttachment::set_domains(uint32_t on)
{
    if (!subscriber_)
        return;
    cupti_.enableDomain(on, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cupti_.enableDomain(on, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
}

// Back to Attached from Draining or Armed (a window opened, recording ends, or cuptiFinalize failed): the domains
// set_domains(1) enabled wholesale go off, which takes the session's own callbacks with them.
void CuptiAttachment::stay_attached()
{
    set_domains(0);
    enable_session_callbacks(cupti_, settings_, subscriber_);
    state_.store(State::Attached, std::memory_order_release);
}

void CuptiAttachment::arm_detach_when_due()
{
    int64_t due = detach_due_ns_.load();
    const int64_t now = host_.now_ns();
    if (due < 0 || now < due || host_.window_open())
        return;
    if (host_.context_pending()) {
        // Not before the first context (AttachmentHost::context_pending): a grace later the flusher looks again,
        // rather than at once (a detach that is due wakes it).
        detach_due_ns_.compare_exchange_strong(due, now + kDetachGraceNs);
        return;
    }
    if (must_stay()) {
        detach_due_ns_.store(-1);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        if (detach_due_ns_.load() != due || state() != State::Attached)
            return;
        // From now on a buffer CUPTI completes is counted where it arrives instead of being posted (buffer_completed).
        state_.store(State::Draining, std::memory_order_release);
    }
    host_.flush_api_records();
    // The buffers already posted are decoded with CUPTI's help: wait until the writer has done so.
    const bool waited = host_.wait_for_writer();
    std::lock_guard lock(mutex_);
    if (state() != State::Draining)
        return; // a window opened meanwhile
    if (!waited || must_stay()) {
        state_.store(State::Attached, std::memory_order_release); // the writer is behind: next tick
        return;
    }
    detach_due_ns_.store(-1);
    // The next runtime or driver call's exit detaches (on_api_callback).
    state_.store(State::Armed, std::memory_order_release);
    set_domains(1);
    host_.inform("capture: detaching CUPTI until the next window");
}

bool CuptiAttachment::on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site)
{
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API, driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (driver && is_graph_call(cbid) && !graphs_seen_.exchange(true))
        host_.inform("capture: the job uses CUDA graphs: CUPTI stays attached between windows from now on "
                     "(detaching it breaks their launches)");
    if (state() != State::Armed)
        return false;
    if ((runtime || driver) && site == CUPTI_API_EXIT && host_.in_owner_process())
        detach_at_api_exit();
    return true;
}

void CuptiAttachment::detach_at_api_exit()
{
    std::lock_guard lock(mutex_);
    if (state() != State::Armed)
        return;
    if (must_stay()) { // a graph call (or the hardware trace) came while the detach was armed
        stay_attached();
        return;
    }
    const auto started = std::chrono::steady_clock::now();
    host_.set_nvtx_forwarding(false); // CUPTI's NVTX implementation would attach it again
    const CUptiResult result = cupti_.finalize();
    if (result != CUPTI_SUCCESS) {
        host_.set_nvtx_forwarding(true);
        stay_attached();
        detach_failed_.store(true);
        host_.warn_once("capture-detach",
            std::string("cannot detach CUPTI between capture windows: ") + cupti_.result_name(result)
                + " (it stays attached; the job runs slower outside windows)");
        return;
    }
    subscriber_ = nullptr; // gone with CUPTI
    state_.store(State::Detached, std::memory_order_release);
    host_.inform("capture: CUPTI detached in "
        + std::to_string(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count())
        + " us");
}

// CUPTI as the session's start left it, minus the window's kinds and API calls, which open_window switches.
bool CuptiAttachment::attach_again()
{
    // CUPTI starts its correlation ids over. Every buffer of the CUPTI before was decoded before it was detached
    // (arm_detach_when_due), and the writer's queue keeps its order, so the records from here on are shifted past
    // them (RecordDecoder::start_correlation_generation).
    if (!host_.start_correlation_generation()) {
        host_.warn_once("capture-attach-queue",
            "cannot attach CUPTI again for a capture window: the writer's queue is "
            "full (this window records nothing)");
        return false;
    }
    generation_.fetch_add(1, std::memory_order_relaxed);
    char holder[256] = {};
    const CUptiResult result = subscribe_as_fp8scope(holder);
    if (result != CUPTI_SUCCESS) {
        subscriber_ = nullptr;
        host_.warn_once("capture-attach",
            std::string("cannot attach CUPTI again for a capture window: ") + cupti_.result_name(result)
                + " (windows from now on record nothing)");
        return false;
    }
    cupti_.activityRegisterCallbacks(callbacks_.buffer_requested, callbacks_.buffer_completed);
    host_.set_nvtx_forwarding(true);
    apply_cupti_settings(cupti_, settings_, subscriber_);
    for (CUpti_ActivityKind kind : settings_.start_only_kinds)
        cupti_.activityEnable(kind);
    return true;
}

} // namespace fp8scope::collector
