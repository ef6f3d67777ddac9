// CuptiAttachment (cupti_attachment.hpp), the collector's attach/detach state machine, driven through every transition
// with a fake CUPTI table and a fake session: each test asserts the exact sequence of CUPTI calls a transition makes,
// and where the API calls' flag stood at each. No CUDA, no GPU.
#include "cupti/cupti_attachment.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace fp8scope::collector;
using State = CuptiAttachment::State;

namespace {

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
    bool writer_keeps_up = true; // wait_for_writer
    bool writer_queue_full = false; // start_correlation_generation
    bool owner_process = true;
    std::function<void()> while_draining; // runs inside wait_for_writer, as another thread would
    int api_ids_off = 0; // cuptiActivityEnableRuntimeApi/DriverApi(cbid, 0): counted, not listed
    std::vector<std::string> informed, warned;
};
FakeWorld* g_world = nullptr;

void record(std::string what)
{
    g_world->calls.push_back({ std::move(what), g_world->recording.load() });
}

// record() for the fakes that always succeed.
CUptiResult recorded(std::string what)
{
    record(std::move(what));
    return CUPTI_SUCCESS;
}

std::string kind_name(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return "KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return "MEMSET";
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return "DEVICE";
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        return "CONTEXT";
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return "DRIVER";
    default:
        return std::to_string(static_cast<int>(kind));
    }
}

std::string domain_name(CUpti_CallbackDomain domain)
{
    return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "RUNTIME" : domain == CUPTI_CB_DOMAIN_DRIVER_API ? "DRIVER" : "?";
}

CUpti_SubscriberHandle fake_handle()
{
    static int token = 0;
    return reinterpret_cast<CUpti_SubscriberHandle>(&token);
}

CUptiResult fake_subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*)
{
    record("subscribe");
    if (g_world->subscribe_result == CUPTI_SUCCESS)
        *subscriber = fake_handle();
    return g_world->subscribe_result;
}

CUptiResult fake_subscribe_v2(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* params)
{
    record(std::string("subscribe_v2 ") + params->subscriberName);
    if (g_world->subscribe_result == CUPTI_SUCCESS)
        *subscriber = fake_handle();
    else if (params->oldSubscriberName && params->oldSubscriberSize > g_world->holder.size())
        std::strcpy(params->oldSubscriberName, g_world->holder.c_str());
    return g_world->subscribe_result;
}

CUptiResult fake_result_string(CUptiResult result, const char** text)
{
    *text = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
        : result == CUPTI_ERROR_NOT_INITIALIZED                      ? "CUPTI_ERROR_NOT_INITIALIZED"
                                                                     : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

// cuptiActivityEnableRuntimeApi/DriverApi: the ids switched on are listed, those switched off only counted.
CUptiResult api_id(const char* what, CUpti_CallbackId cbid, uint8_t on)
{
    if (!on) {
        ++g_world->api_ids_off;
        return CUPTI_SUCCESS;
    }
    return recorded(what + std::to_string(cbid) + " 1");
}

CuptiApi fake_cupti()
{
    CuptiApi api;
    api.getResultString = fake_result_string;
    api.subscribe = fake_subscribe;
    api.subscribeV2 = fake_subscribe_v2;
    api.enableCallback = [](uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
        return recorded(
            "enableCallback " + std::to_string(on) + " " + domain_name(domain) + " " + std::to_string(cbid));
    };
    api.enableDomain = [](uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
        return recorded("enableDomain " + std::to_string(on) + " " + domain_name(domain));
    };
    api.activityEnable = [](CUpti_ActivityKind kind) { return recorded("enable " + kind_name(kind)); };
    api.activityDisable = [](CUpti_ActivityKind kind) { return recorded("disable " + kind_name(kind)); };
    api.activityEnableRuntimeApi = [](CUpti_CallbackId cbid, uint8_t on) { return api_id("runtimeApi ", cbid, on); };
    api.activityEnableDriverApi = [](CUpti_CallbackId cbid, uint8_t on) { return api_id("driverApi ", cbid, on); };
    api.activityEnableLatencyTimestamps
        = [](uint8_t on) { return recorded("latencyTimestamps " + std::to_string(on)); };
    api.activityEnableAllSyncRecords = [](uint8_t on) { return recorded("allSyncRecords " + std::to_string(on)); };
    api.activityRegisterCallbacks = [](CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
        return recorded("registerCallbacks");
    };
    api.activityFlushAll = [](uint32_t flags) { return recorded("flushAll " + std::to_string(flags)); };
    api.activityFlushPeriod = [](uint32_t ms) { return recorded("flushPeriod " + std::to_string(ms)); };
    api.setThreadIdType = [](CUpti_ActivityThreadIdType type) {
        return recorded(type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? "threadIdType SYSTEM" : "threadIdType DEFAULT");
    };
    api.finalize = [] {
        record("finalize");
        return g_world->finalize_result;
    };
    return api;
}

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

std::string callback(uint32_t on, const char* domain, CUpti_CallbackId cbid)
{
    return "enableCallback " + std::to_string(on) + " " + domain + " " + std::to_string(cbid);
}

// enable_session_callbacks for the Rig's settings: cudaDeviceReset's, the graph calls', the traced API calls'.
std::vector<std::string> session_callbacks()
{
    std::vector<std::string> calls { callback(1, "RUNTIME", kReset) };
    for (CUpti_CallbackId cbid :
        { CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
            CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
            CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload,
            CUPTI_DRIVER_TRACE_CBID_cuGraphUpload_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz })
        calls.push_back(callback(1, "DRIVER", cbid));
    calls.push_back(callback(1, "RUNTIME", kLaunch));
    calls.push_back(callback(1, "DRIVER", kDriverLaunch));
    return calls;
}

std::vector<std::string> joined(std::vector<std::string> first, const std::vector<std::string>& then)
{
    first.insert(first.end(), then.begin(), then.end());
    return first;
}

const std::vector<std::string> kKindsOn { "enable KERNEL", "enable MEMCPY", "enable MEMSET" };
// A detach armed and called off: the domains enabled wholesale go off with the session's own callbacks.
const std::vector<std::string> kStayAttached
    = joined({ "enableDomain 0 RUNTIME", "enableDomain 0 DRIVER" }, session_callbacks());

} // namespace

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

TEST_CASE("CUPTI attachment: a window after a detach attaches CUPTI again as the start left it",
    "[collector][cupti_attachment]")
{
    Rig rig;
    rig.detach();
    CHECK(rig.attachment.generation() == 1);

    rig.open_window();
    CHECK(rig.calls()
        == joined(joined({ "host: new correlation generation", "subscribe_v2 fp8scope", "registerCallbacks",
                             "host: NVTX forwarding on", "threadIdType SYSTEM", "allSyncRecords 0", "flushPeriod 500" },
                      session_callbacks()),
            joined({ "enable DEVICE", "enable CONTEXT" }, kKindsOn)));
    // The API calls' flag goes on once CUPTI is attached again, before the window's kinds: no call is kept while
    // attaching might still fail.
    const std::vector<FakeWorld::Call>& calls = rig.world.calls;
    const size_t window_from = calls.size() - kKindsOn.size();
    for (size_t i = 0; i < calls.size(); ++i)
        CHECK(calls[i].recording == (i >= window_from));
    CHECK(rig.attachment.attached());
    CHECK(rig.attachment.subscriber() == fake_handle());
    CHECK(rig.attachment.generation() == 2);
    CHECK(rig.world.informed.back().starts_with("capture: CUPTI attached again in "));
    rig.clear();

    // The next window's end: the same grace again.
    rig.world.now_ns = 5 * kWindowEndNs;
    rig.attachment.close_window(rig.world.recording);
    CHECK(rig.attachment.detach_due_ns() == 5 * kWindowEndNs + CuptiAttachment::kDetachGraceNs);
}

TEST_CASE("CUPTI attachment: another tool holds CUPTI when it is attached again", "[collector][cupti_attachment]")
{
    Rig rig;
    rig.detach();

    SECTION("its subscriber took CUPTI")
    {
        rig.world.subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        rig.world.holder = "torch.profiler";
        rig.open_window();
        CHECK(rig.calls() == std::vector<std::string> { "host: new correlation generation", "subscribe_v2 fp8scope" });
        CHECK(rig.world.warned
            == std::vector<std::string> { "capture-attach: cannot attach CUPTI again for a capture window: "
                                          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (windows from now on "
                                          "record nothing)" });
        CHECK(rig.attachment.state() == State::Detached);
        CHECK(rig.attachment.subscriber() == nullptr);
    }
    SECTION("the writer's queue is full: not even subscribed")
    {
        rig.world.writer_queue_full = true;
        rig.open_window();
        CHECK(rig.calls() == std::vector<std::string> { "host: new correlation generation" });
        CHECK(rig.world.warned
            == std::vector<std::string> { "capture-attach-queue: cannot attach CUPTI again for a capture window: the "
                                          "writer's queue is full (this window records nothing)" });
        CHECK(rig.attachment.state() == State::Detached);
        CHECK(rig.attachment.generation() == 1);
    }
    // Either way the window records nothing: no API call is kept, and its close makes no CUPTI call while detached
    // (which would start CUPTI again behind the session's back).
    CHECK_FALSE(rig.world.recording.load());
    rig.clear();
    rig.close_window();
    CHECK(rig.calls() == std::vector<std::string> { "host: flush API records" });
    CHECK_FALSE(rig.world.recording.load());
    CHECK(rig.attachment.state() == State::Detached);
    CHECK_FALSE(rig.attachment.detach_due_ns().has_value());
}

TEST_CASE("CUPTI attachment: a window opening calls off a pending detach", "[collector][cupti_attachment]")
{
    Rig rig;
    SECTION("due, not armed yet: nothing to undo")
    {
        rig.open_window();
        rig.close_window();
        rig.clear();
        rig.open_window();
        CHECK(rig.calls() == kKindsOn);
        CHECK_FALSE(rig.attachment.detach_due_ns());
    }
    SECTION("armed: the domains go off, the session's callbacks on again")
    {
        rig.arm();
        rig.open_window();
        CHECK(rig.calls() == joined(kStayAttached, kKindsOn));
        CHECK(rig.attachment.attached());
    }
    SECTION("draining: the flusher finds the window open and leaves CUPTI attached")
    {
        rig.make_detach_due();
        rig.world.while_draining = [&] { rig.open_window(); };
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls()
            == joined({ "host: flush API records", "host: wait for the writer", "enableDomain 0 RUNTIME",
                          "enableDomain 0 DRIVER" },
                joined(session_callbacks(), kKindsOn)));
        CHECK(rig.attachment.attached());
    }
}

TEST_CASE("CUPTI attachment: a CUDA graph call rules out detaching for good", "[collector][cupti_attachment]")
{
    Rig rig;
    const std::string uses_graphs = "capture: the job uses CUDA graphs: CUPTI stays attached between windows from "
                                    "now on (detaching it breaks their launches)";
    SECTION("seen inside a window: no detach is ever due")
    {
        rig.open_window();
        CHECK_FALSE(rig.attachment.on_api_callback(
            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_API_ENTER));
        CHECK_FALSE(rig.attachment.on_api_callback(
            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_API_ENTER));
        CHECK(rig.world.informed == std::vector<std::string> { uses_graphs }); // said once
        CHECK(rig.attachment.detach_ruled_out());
        rig.close_window();
        CHECK_FALSE(rig.attachment.detach_due_ns());
    }
    SECTION("seen after the window, before the detach is due: the pending detach is dropped")
    {
        rig.open_window();
        rig.close_window();
        rig.attachment.on_api_callback(
            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphUpload, CUPTI_API_EXIT);
        rig.world.now_ns = kWindowEndNs + CuptiAttachment::kDetachGraceNs;
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls().empty());
        CHECK_FALSE(rig.attachment.detach_due_ns());
        CHECK(rig.attachment.attached());
    }
    SECTION("seen while draining: not armed")
    {
        rig.make_detach_due();
        rig.world.while_draining = [&] {
            rig.attachment.on_api_callback(
                CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_API_ENTER);
        };
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls() == std::vector<std::string> { "host: flush API records", "host: wait for the writer" });
        CHECK(rig.attachment.attached());
    }
    SECTION("seen while armed: its own exit calls the detach off")
    {
        rig.arm();
        CHECK(rig.attachment.on_api_callback(
            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, CUPTI_API_ENTER));
        CHECK(rig.attachment.on_api_callback(
            CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, CUPTI_API_EXIT));
        CHECK(rig.calls() == kStayAttached); // no cuptiFinalize
        CHECK(rig.attachment.attached());
        rig.clear();
        rig.open_window();
        rig.close_window();
        CHECK_FALSE(rig.attachment.detach_due_ns());
    }
}

TEST_CASE("CUPTI attachment: cuptiFinalize fails once: attached for good, one warning", "[collector][cupti_attachment]")
{
    Rig rig;
    rig.arm();
    rig.world.finalize_result = CUPTI_ERROR_NOT_INITIALIZED;
    CHECK(rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, CUPTI_API_EXIT));
    CHECK(
        rig.calls() == joined({ "host: NVTX forwarding off", "finalize", "host: NVTX forwarding on" }, kStayAttached));
    CHECK(rig.world.warned
        == std::vector<std::string> { "capture-detach: cannot detach CUPTI between capture windows: "
                                      "CUPTI_ERROR_NOT_INITIALIZED (it stays attached; the job runs slower outside "
                                      "windows)" });
    CHECK(rig.attachment.attached());
    CHECK(rig.attachment.subscriber() == fake_handle());
    CHECK(rig.attachment.detach_ruled_out());
    rig.open_window();
    rig.close_window();
    CHECK_FALSE(rig.attachment.detach_due_ns());
}

// The session's cudaDeviceReset callback (on_callback) first asks the attachment, then flushes at the call's entry
// only if it is still its turn (flush_session: flush_if_attached).
TEST_CASE("CUPTI attachment: cudaDeviceReset while a detach is pending", "[collector][cupti_attachment]")
{
    Rig rig;
    const auto reset_callback = [&](CUpti_ApiCallbackSite site) {
        if (!rig.attachment.on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kReset, site) && site == CUPTI_API_ENTER)
            rig.attachment.flush_if_attached(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    };
    SECTION("attached: the reset's entry flushes everything")
    {
        reset_callback(CUPTI_API_ENTER);
        reset_callback(CUPTI_API_EXIT);
        CHECK(rig.calls() == std::vector<std::string> { "flushAll 1" });
    }
    SECTION("draining: no flush, and no detach while the writer still needs CUPTI")
    {
        rig.make_detach_due();
        rig.world.while_draining = [&] {
            reset_callback(CUPTI_API_ENTER);
            reset_callback(CUPTI_API_EXIT);
        };
        rig.clear();
        rig.attachment.arm_detach_when_due();
        CHECK(rig.calls()
            == std::vector<std::string> { "host: flush API records", "host: wait for the writer",
                "enableDomain 1 RUNTIME", "enableDomain 1 DRIVER" });
        CHECK(rig.attachment.state() == State::Armed);
    }
    SECTION("armed: the entry does nothing, the exit detaches")
    {
        rig.arm();
        reset_callback(CUPTI_API_ENTER);
        CHECK(rig.calls().empty());
        reset_callback(CUPTI_API_EXIT);
        CHECK(rig.calls() == std::vector<std::string> { "host: NVTX forwarding off", "finalize" });
        CHECK(rig.attachment.state() == State::Detached);
    }
}

TEST_CASE("CUPTI attachment: the end of recording takes CUPTI back and flushes", "[collector][cupti_attachment]")
{
    Rig rig;
    SECTION("attached")
    {
        rig.attachment.flush_at_stop();
        CHECK(rig.calls() == std::vector<std::string> { "flushAll 1" });
    }
    SECTION("armed")
    {
        rig.arm();
        rig.attachment.flush_at_stop();
        CHECK(rig.calls() == joined(kStayAttached, { "flushAll 1" }));
        CHECK(rig.attachment.attached());
    }
    SECTION("detached: nothing to flush, and no CUPTI call")
    {
        rig.detach();
        rig.attachment.flush_at_stop();
        CHECK(rig.calls().empty());
    }
}

TEST_CASE("CUPTI attachment: detach_soon brings a later detach forward only", "[collector][cupti_attachment]")
{
    Rig rig;
    CHECK_FALSE(rig.attachment.detach_soon(10)); // none pending
    rig.open_window();
    rig.close_window();
    const int64_t due = kWindowEndNs + CuptiAttachment::kDetachGraceNs;
    CHECK_FALSE(rig.attachment.detach_soon(-1)); // not recording
    CHECK_FALSE(rig.attachment.detach_soon(due)); // due already
    CHECK(rig.attachment.detach_due_ns() == due);
    CHECK(rig.attachment.detach_soon(kWindowEndNs + 5));
    CHECK(rig.attachment.detach_due_ns() == kWindowEndNs + 5);
}
