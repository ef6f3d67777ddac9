// A fake CUPTI table and a fake session for CuptiAttachment's tests (cupti_attachment_test.cpp,
// cupti_reattach_test.cpp): the fakes record every CUPTI call with where the window's flag stood, and answer as the
// test's FakeWorld says. No CUDA, no GPU.
#pragma once

#include "cupti/cupti_attachment.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace fp8scope::collector::testing {

using State = CuptiAttachment::State;

// What the fakes record, and how they answer. The CuptiApi table holds plain function pointers, so the fakes reach
// the world of the test running through this pointer.
struct FakeWorld {
    struct Call {
        std::string what;
        bool recording; // the window's flag when the call was made
    };
    std::vector<Call> calls;
    std::atomic<bool> recording { false };
    int64_t now_ns = 0;
    CUptiResult subscribe_result = CUPTI_SUCCESS;
    std::string holder; // the tool subscribeV2 names when another one holds CUPTI
    CUptiResult finalize_result = CUPTI_SUCCESS;
    CUptiResult hw_trace_result = CUPTI_ERROR_NOT_SUPPORTED; // cuptiActivityEnableHWTrace: as on Hopper
    bool writer_keeps_up = true; // wait_for_writer
    bool writer_queue_full = false; // start_correlation_generation
    bool owner_process = true;
    bool context_pending = false; // AttachmentHost::context_pending: no CUDA context made yet
    std::function<void()> while_draining; // runs inside wait_for_writer, as another thread would
    int api_ids_off = 0; // cuptiActivityEnableRuntimeApi/DriverApi(cbid, 0): counted, not listed
    std::vector<std::string> informed, warned;
};
extern FakeWorld* g_world;

// Appends a call to the running test's world.
void record(std::string what);

// The CuptiApi table whose every entry records its call in g_world.
CuptiApi fake_cupti();

// The subscriber handle the fake cuptiSubscribe hands out.
CUpti_SubscriberHandle fake_handle();

class FakeHost final : public AttachmentHost {
public:
    int64_t now_ns() override { return g_world->now_ns; }
    bool window_open() override { return g_world->recording.load(); }
    void flush_api_records() override { record("host: flush API records"); }
    bool wait_for_writer() override
    {
        record("host: wait for the writer");
        if (g_world->while_draining)
            g_world->while_draining();
        return g_world->writer_keeps_up;
    }
    bool start_correlation_generation() override
    {
        record("host: new correlation generation");
        return !g_world->writer_queue_full;
    }
    void set_nvtx_forwarding(bool on) override
    {
        record(on ? "host: NVTX forwarding on" : "host: NVTX forwarding off");
    }
    bool in_owner_process() override { return g_world->owner_process; }
    bool context_pending() override { return g_world->context_pending; }
    void inform(std::string_view text) override { g_world->informed.emplace_back(text); }
    void warn_once(std::string_view key, std::string_view text) override
    {
        g_world->warned.push_back(std::string(key) + ": " + std::string(text));
    }
};

constexpr int64_t kWindowEndNs = 1'000'000'000;
constexpr CUpti_CallbackId kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr CUpti_CallbackId kDriverLaunch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
constexpr CUpti_CallbackId kReset = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020;

// A session as the collector starts one for step windows: kernels, copies and memsets switched by windows, DEVICE and
// CONTEXT for the whole run, API calls from callbacks, CUPTI detached between windows. Subscribed, log cleared.
struct Rig {
    FakeWorld world;
    CuptiApi cupti = fake_cupti();
    CuptiSettings settings;
    FakeHost host;
    CuptiAttachment attachment { cupti, settings, CuptiCallbacks {}, host };

    Rig()
    {
        g_world = &world;
        settings.window_kinds
            = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET };
        settings.start_only_kinds = { CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT };
        settings.runtime_cbids = { kLaunch };
        settings.driver_cbids = { kDriverLaunch };
        settings.api_from_callbacks = true;
        settings.detach_between_windows = true;
        settings.zeroed_buffers = true; // as the session sets it: its pool zero-fills every buffer
        std::string why_not;
        REQUIRE(attachment.subscribe(why_not));
        world.calls.clear();
    }
    ~Rig() { g_world = nullptr; }

    std::vector<std::string> calls() const
    {
        std::vector<std::string> what;
        for (const FakeWorld::Call& call : world.calls)
            what.push_back(call.what);
        return what;
    }
    void clear() { world.calls.clear(); }

    void open_window() { attachment.open_window(world.recording); }
    // Closes a window at kWindowEndNs.
    void close_window()
    {
        world.now_ns = kWindowEndNs;
        attachment.close_window(world.recording);
    }
    // A window closes, and the grace after it passes.
    void make_detach_due()
    {
        open_window();
        close_window();
        world.now_ns = kWindowEndNs + CuptiAttachment::kDetachGraceNs;
    }
    // ... and the flusher arms the detach.
    void arm()
    {
        make_detach_due();
        attachment.arm_detach_when_due();
        REQUIRE(attachment.state() == State::Armed);
        clear();
    }
    // ... and the job's next CUDA call returns.
    void detach()
    {
        arm();
        attachment.on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, CUPTI_API_EXIT);
        REQUIRE(attachment.state() == State::Detached);
        clear();
    }
};
// The recorded form of cuptiEnableCallback(on, domain, cbid).
std::string callback(uint32_t on, const char* domain, CUpti_CallbackId cbid);

// enable_session_callbacks for the Rig's settings: cudaDeviceReset's, the graph calls', the traced API calls'.
std::vector<std::string> session_callbacks();

std::vector<std::string> joined(std::vector<std::string> first, const std::vector<std::string>& then);

inline const std::vector<std::string> kKindsOn { "enable KERNEL", "enable MEMCPY", "enable MEMSET" };
// A detach armed and called off: the domains enabled wholesale go off with the session's own callbacks.
inline const std::vector<std::string> kStayAttached
    = joined({ "enableDomain 0 RUNTIME", "enableDomain 0 DRIVER" }, session_callbacks());

} // namespace fp8scope::collector::testing
