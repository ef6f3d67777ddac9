// CuptiAttachment (cupti_attachment.hpp), the collector's attach/detach state machine, driven through every transition
// with a fake CUPTI table and a fake session: each test asserts the exact sequence of CUPTI calls a transition makes,
// and where the API calls' flag stood at each. No CUDA, no GPU.
// Subscribing, windows and detaching here; re-attaching, CUDA graphs, failures and the end in
// cupti_reattach_test.cpp.
#include "fake_cupti.hpp"

#include "cupti/kernel_timestamps.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fp8scope::collector;
using namespace fp8scope::collector::testing;

TEST_CASE("CUPTI attachment: subscribing, or another tool holding CUPTI", "[collector][cupti_attachment]")
{
    Rig rig; // subscribed in its constructor
    CHECK(rig.attachment.subscriber() == fake_handle());
    CHECK(rig.attachment.attached());

    SECTION("nsys holds CUPTI: named through cuptiSubscribe_v2")
    {
        Rig other;
        CuptiAttachment second { other.cupti, other.settings, CuptiCallbacks {}, other.host };
        other.world.subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        other.world.holder = "nsys";
        std::string why_not;
        CHECK_FALSE(second.subscribe(why_not));
        CHECK(why_not == "CUPTI is already in use by nsys, and CUPTI admits one profiling tool per process");
        CHECK(second.subscriber() == nullptr);
        CHECK(other.calls() == std::vector<std::string> { "subscribe_v2 fp8scope" });
    }
    SECTION("an older CUPTI without cuptiSubscribe_v2 cannot name the holder")
    {
        Rig other;
        other.cupti.subscribeV2 = nullptr;
        CuptiAttachment second { other.cupti, other.settings, CuptiCallbacks {}, other.host };
        other.world.subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        std::string why_not;
        CHECK_FALSE(second.subscribe(why_not));
        CHECK(
            why_not == "CUPTI is already in use by another profiler, and CUPTI admits one profiling tool per process");
        CHECK(other.calls() == std::vector<std::string> { "subscribe" });
    }
    SECTION("any other failure names CUPTI's result")
    {
        Rig other;
        CuptiAttachment second { other.cupti, other.settings, CuptiCallbacks {}, other.host };
        other.world.subscribe_result = CUPTI_ERROR_NOT_INITIALIZED;
        std::string why_not;
        CHECK_FALSE(second.subscribe(why_not));
        CHECK(why_not == "cuptiSubscribe failed: CUPTI_ERROR_NOT_INITIALIZED");
    }
}

TEST_CASE("CUPTI attachment: a window switches the kernels' kind on first and off last, the API flag around it",
    "[collector][cupti_attachment]")
{
    Rig rig;
    rig.open_window();
    CHECK(rig.calls() == kKindsOn);
    for (const FakeWorld::Call& call : rig.world.calls)
        CHECK(call.recording); // the flag went up before any kind went on
    rig.clear();

    rig.close_window();
    CHECK(rig.calls()
        == std::vector<std::string> {
            "disable MEMSET", "disable MEMCPY", "disable KERNEL", "host: flush API records" });
    // Up until the kernels' kind is off, down right after it.
    CHECK(rig.world.calls[0].recording);
    CHECK(rig.world.calls[2].recording);
    CHECK_FALSE(rig.world.calls[3].recording);
    CHECK_FALSE(rig.world.recording.load());
    CHECK(rig.attachment.detach_due_ns() == kWindowEndNs + CuptiAttachment::kDetachGraceNs);
    CHECK(rig.attachment.attached());
}

TEST_CASE("CUPTI attachment: API calls as activity kinds open as 'all but a few' and close after the kernels",
    "[collector][cupti_attachment]")
{
    Rig rig;
    rig.settings.api_from_callbacks = false;
    rig.open_window();
    CHECK(rig.calls()
        == joined({ "enable RUNTIME", "runtimeApi " + std::to_string(kLaunch) + " 1", "enable DRIVER",
                      "driverApi " + std::to_string(kDriverLaunch) + " 1" },
            kKindsOn));
    // Every other id off: all ids but 0 and the traced one, in both domains.
    CHECK(rig.world.api_ids_off == (CUPTI_RUNTIME_TRACE_CBID_SIZE - 2) + (CUPTI_DRIVER_TRACE_CBID_SIZE - 2));
    rig.clear();
    rig.world.api_ids_off = 0;

    rig.close_window();
    CHECK(rig.calls()
        == std::vector<std::string> { "disable MEMSET", "disable MEMCPY", "disable KERNEL", "disable RUNTIME",
            "disable DRIVER", "host: flush API records" });
    CHECK(rig.world.api_ids_off == 2); // the traced ids switched on one by one at start
    CHECK(rig.world.calls[2].recording);
    CHECK_FALSE(rig.world.calls[3].recording);
}

TEST_CASE("CUPTI attachment: detached after the grace, once the writer is drained, at an API call's exit",
    "[collector][cupti_attachment]")
{
    Rig rig;
    rig.open_window();
    rig.close_window();
    rig.clear();

    rig.world.now_ns = kWindowEndNs + CuptiAttachment::kDetachGraceNs - 1;
    rig.attachment.arm_detach_when_due();
    CHECK(rig.calls().empty()); // not due yet
    CHECK(rig.attachment.attached());

    rig.world.now_ns = kWindowEndNs + CuptiAttachment::kDetachGraceNs;
    rig.attachment.arm_detach_when_due();
    CHECK(rig.calls()
        == std::vector<std::string> { "host: flush API records", "host: wait for the writer", "enableDomain 1 RUNTIME",
            "enableDomain 1 DRIVER" });
    CHECK(rig.attachment.state() == State::Armed);
    CHECK_FALSE(rig.attachment.detach_due_ns());
    CHECK(rig.world.informed.back() == "capture: detaching CUPTI until the next window");
    rig.clear();

    // The entry of a call does nothing, but ends the callback; its exit detaches.
    CHECK(rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunch, CUPTI_API_ENTER));
    CHECK(rig.calls().empty());
    CHECK(rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunch, CUPTI_API_EXIT));
    CHECK(rig.calls() == std::vector<std::string> { "host: NVTX forwarding off", "finalize" });
    CHECK(rig.attachment.state() == State::Detached);
    CHECK(rig.attachment.subscriber() == nullptr);
    CHECK(rig.world.informed.back().starts_with("capture: CUPTI detached in "));
    rig.clear();

    // Detached: no CUPTI call at all.
    CHECK_FALSE(rig.attachment.flush_if_attached(0));
    CHECK_FALSE(rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, CUPTI_API_EXIT));
    rig.attachment.flush_at_stop();
    CHECK(rig.calls().empty());
}

TEST_CASE("CUPTI attachment: no detach while a window is open or the writer is behind", "[collector][cupti_attachment]")
{
    Rig rig;
    rig.make_detach_due();

    SECTION("a window is open")
    {
        rig.world.recording = true;
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls().empty());
        CHECK(rig.attachment.attached());
    }
    SECTION("the writer did not drain in time: attached again, tried at the next tick")
    {
        rig.world.writer_keeps_up = false;
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls() == std::vector<std::string> { "host: flush API records", "host: wait for the writer" });
        CHECK(rig.attachment.attached());
        CHECK(rig.attachment.detach_due_ns()); // still due
        rig.world.writer_keeps_up = true;
        rig.attachment.arm_detach_when_due();
        CHECK(rig.attachment.state() == State::Armed);
    }
    SECTION("no CUDA context yet: put off by a grace, no CUPTI call, then armed once the first context is made")
    {
        // Detached before the job's first context, CUPTI would never see it made: no hardware-trace question, no
        // DEVICE records (a monitored trace without its GPUs on the H200).
        rig.world.context_pending = true;
        rig.clear();
        const int64_t now = rig.world.now_ns;
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls().empty());
        CHECK(rig.attachment.attached());
        REQUIRE(rig.attachment.detach_due_ns());
        CHECK(*rig.attachment.detach_due_ns() == now + CuptiAttachment::kDetachGraceNs); // the flusher sleeps, no spin
        rig.world.now_ns = now + CuptiAttachment::kDetachGraceNs;
        rig.attachment.arm_detach_when_due();
        CHECK(rig.attachment.attached()); // still no context
        rig.world.context_pending = false;
        rig.world.now_ns += CuptiAttachment::kDetachGraceNs;
        rig.attachment.arm_detach_when_due();
        CHECK(rig.attachment.state() == State::Armed);
    }
    SECTION("a forked child never finalizes the parent's CUPTI")
    {
        rig.attachment.arm_detach_when_due();
        rig.clear();
        rig.world.owner_process = false;
        CHECK(rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, CUPTI_API_EXIT));
        CHECK(rig.calls().empty());
        CHECK(rig.attachment.state() == State::Armed);
    }
}

TEST_CASE("kernel timestamps: CUPTI's hardware event trace where it takes it, else software and why",
    "[collector][cupti_attachment]")
{
    struct Case {
        const char* what;
        bool has_call;
        CUptiResult result;
        bool wanted;
        bool hardware;
        std::string meta;
        std::vector<std::string> calls;
    };
    const std::vector<Case> cases {
        { "Blackwell: CUPTI takes it", true, CUPTI_SUCCESS, true, true, "hardware", { "enableHWTrace 1" } },
        { "Hopper: CUPTI refuses it, and the trace says why", true, CUPTI_ERROR_NOT_SUPPORTED, true, false,
            "software: cuptiActivityEnableHWTrace: CUPTI_ERROR_NOT_SUPPORTED", { "enableHWTrace 1" } },
        { "asked inside cuInit, before the driver is up", true, CUPTI_ERROR_NOT_INITIALIZED, true, false,
            "software: cuptiActivityEnableHWTrace: CUPTI_ERROR_NOT_INITIALIZED", { "enableHWTrace 1" } },
        { "a CUPTI older than 12.8 has no such call", false, CUPTI_SUCCESS, true, false,
            "software: this CUPTI has no cuptiActivityEnableHWTrace (CUDA 12.8+)", {} },
        { "FP8SCOPE_HW_TRACE=0: not asked", true, CUPTI_SUCCESS, false, false, "software: FP8SCOPE_HW_TRACE=0", {} },
    };
    for (const Case& c : cases) {
        INFO(c.what);
        Rig rig;
        rig.world.calls.clear();
        rig.world.hw_trace_result = c.result;
        if (!c.has_call)
            rig.cupti.activityEnableHWTrace = nullptr;
        const KernelTimestamps timestamps = enable_kernel_timestamps(rig.cupti, c.wanted);
        CHECK(timestamps.hardware == c.hardware);
        CHECK(timestamps.meta == c.meta);
        CHECK(rig.calls() == c.calls);
    }
}

// The choice waits for the first context: its callbacks go on at the start, and off again at the first one's entry.
TEST_CASE("kernel timestamps: asked at the first context's creation, once", "[collector][cupti_attachment]")
{
    const std::vector<CUpti_CallbackId> makes_contexts { CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRetain,
        CUPTI_DRIVER_TRACE_CBID_cuCtxCreate, CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2,
        CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v3, CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v4,
        CUPTI_DRIVER_TRACE_CBID_cuGreenCtxCreate };
    for (CUpti_CallbackId cbid : makes_contexts)
        CHECK(makes_context(cbid));
    CHECK_FALSE(makes_context(CUPTI_DRIVER_TRACE_CBID_cuInit));
    CHECK_FALSE(makes_context(kDriverLaunch));

    Rig rig;
    std::vector<std::string> switched_on;
    for (CUpti_CallbackId cbid : makes_contexts)
        switched_on.push_back(callback(1, "DRIVER", cbid));

    SECTION("asked once, at the first context; the callbacks the API rows need stay on")
    {
        rig.world.hw_trace_result = CUPTI_SUCCESS;
        KernelTimestampChoice choice { rig.cupti, true, fake_handle() };
        CHECK(rig.calls() == switched_on);
        CHECK(choice.waiting());
        CHECK(choice.meta_at_start() == "software: no CUDA context was created");
        rig.clear();
        std::vector<uint8_t> driver_traced(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
        driver_traced[CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2] = 1; // traced as an API row: its callback stays on
        const std::optional<KernelTimestamps> chosen = choice.at_context_creation(driver_traced);
        REQUIRE(chosen);
        CHECK(chosen->hardware);
        CHECK(chosen->meta == "hardware");
        std::vector<std::string> expected;
        for (CUpti_CallbackId cbid : makes_contexts)
            if (cbid != CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2)
                expected.push_back(callback(0, "DRIVER", cbid));
        expected.emplace_back("enableHWTrace 1");
        CHECK(rig.calls() == expected);
        CHECK_FALSE(choice.waiting());
        rig.clear();
        CHECK_FALSE(choice.at_context_creation(driver_traced)); // the second context: nothing asked again
        CHECK(rig.calls().empty());
    }
    SECTION("Hopper: refused at the first context, the trace says why")
    {
        KernelTimestampChoice choice { rig.cupti, true, fake_handle() };
        rig.clear();
        const std::optional<KernelTimestamps> chosen = choice.at_context_creation({});
        REQUIRE(chosen);
        CHECK_FALSE(chosen->hardware);
        CHECK(chosen->meta == "software: cuptiActivityEnableHWTrace: CUPTI_ERROR_NOT_SUPPORTED");
        CHECK(rig.calls().size() == makes_contexts.size() + 1); // every callback off, then the one question
    }
    SECTION("decided at the start: not wanted, no such call, or no subscriber to wait with")
    {
        const KernelTimestampChoice off { rig.cupti, false, fake_handle() };
        CHECK(off.meta_at_start() == "software: FP8SCOPE_HW_TRACE=0");
        const KernelTimestampChoice alone { rig.cupti, true, nullptr };
        CHECK(alone.meta_at_start() == "software: no callback subscriber");
        rig.cupti.activityEnableHWTrace = nullptr;
        const KernelTimestampChoice old { rig.cupti, true, fake_handle() };
        CHECK(old.meta_at_start() == "software: this CUPTI has no cuptiActivityEnableHWTrace (CUDA 12.8+)");
        for (const KernelTimestampChoice* choice : { &off, &alone, &old })
            CHECK_FALSE(choice->waiting());
        CHECK(rig.calls().empty()); // no callback switched on, nothing asked
    }
    SECTION("the hardware trace cannot be turned off: no detach after a window")
    {
        rig.attachment.keep_attached();
        CHECK(rig.attachment.detach_ruled_out());
        rig.open_window();
        rig.close_window();
        CHECK_FALSE(rig.attachment.detach_due_ns());
    }
}
