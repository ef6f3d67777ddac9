// CuptiAttachment (cupti_attachment.hpp) after a detach: attaching again, another tool holding CUPTI then, a window
// calling off a pending detach, CUDA graph calls, cuptiFinalize failing, cudaDeviceReset and the end of recording,
// each with the exact sequence of CUPTI calls (fake_cupti.hpp). No CUDA, no GPU.
#include "fake_cupti.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fp8scope::collector;
using namespace fp8scope::collector::testing;

TEST_CASE("CUPTI attachment: a window after a detach attaches CUPTI again as the start left it",
    "[collector][cupti_attachment]")
{
    Rig rig;
    rig.detach();
    CHECK(rig.attachment.generation() == 1);

    rig.open_window();
    CHECK(rig.calls()
        == joined(joined({ "host: new correlation generation", "subscribe_v2 fp8scope", "registerCallbacks",
                             "host: NVTX forwarding on", "threadIdType SYSTEM", "allSyncRecords 0", "setAttribute 5 1",
                             "flushPeriod 500" },
                      session_callbacks()),
            joined({ "enable DEVICE", "enable CONTEXT" }, kKindsOn)));
    // "setAttribute 5 1": CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER again, since the pool's buffers come zeroed.
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
