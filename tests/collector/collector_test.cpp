// The collector's one object (collector/src/session/collector.hpp) made in the test process with a fake CUPTI table
// (fake_cupti.hpp), a fake platform and the real writer: a windowed recording from its start to its trace, through
// the steps that open and close its windows, the step-counted grace, CUPTI detached and attached again, and the end.
// No GPU; the one test that needs the CUDA toolkit's headers (the session decodes CUPTI's records).
#include "fake_cupti.hpp"

#include "session/collector.hpp"
#include "session/process_info.hpp"
#include "session/session.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::collector;
using namespace fp8scope::collector::testing;

namespace {

class FakePlatform final : public CollectorPlatform {
public:
    CuptiApi* cupti = nullptr;
    int starts = 0;
    int harvests = 0;
    const CuptiApi* load_cupti(std::string& error) override
    {
        if (!cupti)
            error = "no CUPTI in this test";
        return cupti;
    }
    void started(Collector&) override { ++starts; }
    void harvest_tensor_stats(TraceDb&, bool) override { ++harvests; }
    std::optional<bool> cuda_context_active() override { return true; }
};

// The fake table of fake_cupti.hpp with what a session's start also calls: CUPTI's clock (CLOCK_REALTIME, as CUPTI's
// is on Linux, so that the session may detach CUPTI between windows), callback names, no records.
CuptiApi session_cupti()
{
    CuptiApi api = fake_cupti();
    api.getVersion = [](uint32_t* version) {
        *version = 130000;
        return CUPTI_SUCCESS;
    };
    api.getTimestamp = [](uint64_t* ns) {
        *ns = static_cast<uint64_t>(realtime_ns());
        return CUPTI_SUCCESS;
    };
    api.getCallbackName = [](CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
        *name = domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == kLaunch    ? "cudaLaunchKernel_v7000"
            : domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == kDriverLaunch ? "cuLaunchKernel"
                                                                            : "cuSomethingElse";
        return CUPTI_SUCCESS;
    };
    api.unsubscribe = [](CUpti_SubscriberHandle) {
        record("unsubscribe");
        return CUPTI_SUCCESS;
    };
    api.activityGetNumDroppedRecords = [](CUcontext, uint32_t, size_t* dropped) {
        *dropped = 0;
        return CUPTI_SUCCESS;
    };
    api.activityGetNextRecord = [](uint8_t*, size_t, CUpti_Activity**) { return CUPTI_ERROR_UNKNOWN; };
    return api;
}

bool logged(const FakeWorld& world, const std::string& what)
{
    for (const FakeWorld::Call& call : world.calls)
        if (call.what == what)
            return true;
    return false;
}

// The variables a session reads, set for one test and put back after it.
struct Environment {
    std::vector<std::string> names;
    void set(const char* name, const std::string& value)
    {
        names.emplace_back(name);
        ::setenv(name, value.c_str(), 1);
    }
    void unset(const char* name)
    {
        names.emplace_back(name);
        ::unsetenv(name);
    }
    ~Environment()
    {
        for (const std::string& name : names)
            ::unsetenv(name.c_str());
    }
};

} // namespace

TEST_CASE("collector: a periodic recording detaches CUPTI after its step grace and attaches it again",
    "[collector][collector_object]")
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "collector" / "collector_object";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Environment env;
    env.set("FP8SCOPE_OUTPUT", (dir / "trace.sqlite").string());
    env.set("FP8SCOPE_CAPTURE_EVERY", "10");
    env.set("FP8SCOPE_CAPTURE_LENGTH", "2");
    env.set("FP8SCOPE_KEEP_EMPTY_TRACES", "1");
    for (const char* name : { "FP8SCOPE_CAPTURE_PLAN", "FP8SCOPE_MANIFEST", "FP8SCOPE_CAPTURE_STEPS",
             "FP8SCOPE_SUBSCRIBE", "FP8SCOPE_CAPTURE_DETACH", "FP8SCOPE_API", "FP8SCOPE_ACTIVITIES" })
        env.unset(name);

    FakeWorld world;
    g_world = &world;
    CuptiApi cupti = session_cupti();
    FakePlatform platform;
    platform.cupti = &cupti;
    Collector c(platform);
    CHECK(c.state() == collector::State::Idle);
    CHECK(c.now_ns() == -1);

    REQUIRE(c.start());
    CHECK(c.state() == collector::State::Running);
    CHECK(platform.starts == 1);
    Session* s = c.running_session();
    REQUIRE(s);
    CHECK(s->cupti_settings.detach_between_windows);
    CHECK(s->cupti_settings.api_from_callbacks);
    CHECK(logged(world, "subscribe_v2 fp8scope"));
    CHECK(logged(world, "registerCallbacks"));
    // No window before step 0: the activities enabled at the start are off.
    CHECK_FALSE(c.capture().recording());
    CHECK(c.now_ns() >= 0);

    // What fp8scope_step(n) does (entry/c_api.cpp).
    auto step = [&c](int64_t n) {
        c.steps().mark(n);
        c.capture().on_marker_step(n, c.now_ns());
    };
    step(0);
    CHECK(c.capture().recording());
    CHECK(c.capture().allows_stats());
    step(1);
    step(2); // the window closes: CUPTI's detach is due after the 300 ms grace ...
    CHECK_FALSE(c.capture().recording());
    const std::optional<int64_t> due = c.detach_due_ns();
    REQUIRE(due);
    CHECK(*due > c.now_ns());
    step(3);
    CHECK(c.detach_due_ns() == due);
    step(4); // ... or kGraceSteps steps later, whichever comes first: now
    REQUIRE(c.detach_due_ns());
    CHECK(*c.detach_due_ns() <= c.now_ns());

    // No CUDA context made yet: the flusher puts the detach off (CUPTI must see the first context made).
    c.flush_periodic();
    CHECK(s->attachment->state() == CuptiAttachment::State::Attached);
    REQUIRE(c.detach_due_ns());
    CHECK(*c.detach_due_ns() > c.now_ns());
    // The job's first context (what on_callback does at cuDevicePrimaryCtxRetain's entry); the detach is brought
    // forward to now, as the steps' grace did above.
    REQUIRE(s->timestamps->at_context_creation(s->cupti_settings.driver_traced));
    c.detach_soon();
    REQUIRE(c.detach_due_ns());
    CHECK(*c.detach_due_ns() <= c.now_ns());

    // The flusher's next wake-up drains the writer and arms the detach; the job's next CUDA call's exit detaches.
    world.calls.clear();
    c.flush_periodic();
    CHECK(s->attachment->state() == CuptiAttachment::State::Armed);
    CHECK(platform.harvests >= 0); // posted to the writer, which runs it in its own time
    s->attachment->on_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch, CUPTI_API_EXIT);
    CHECK(logged(world, "finalize"));
    CHECK_FALSE(c.cupti_attached());
    CHECK_FALSE(c.nvtx().on.load()); // CUPTI's NVTX implementation would attach it again
    // Detached: the periodic flush makes no CUPTI call.
    world.calls.clear();
    c.flush_periodic();
    CHECK(world.calls.empty());

    // Step 10 opens the next window: CUPTI is attached again, as the start left it.
    for (int64_t n = 5; n <= 9; ++n)
        step(n);
    CHECK_FALSE(c.cupti_attached());
    step(10);
    CHECK(c.cupti_attached());
    CHECK(c.nvtx().on.load());
    CHECK(c.capture().recording());
    CHECK(logged(world, "subscribe_v2 fp8scope"));
    CHECK(s->attachment->generation() == 2);

    // The end: the open window is closed and the trace finished.
    c.stop("exit");
    CHECK(c.state() == collector::State::Stopped);
    CHECK(c.running_session() == nullptr);
    CHECK(c.now_ns() == -1);
    CHECK(std::filesystem::exists(dir / "trace.sqlite"));
    CHECK(c.capture().never_opened() == std::nullopt);
    c.stop("exit"); // a second call does nothing
    CHECK(c.state() == collector::State::Stopped);
    g_world = nullptr;
}

TEST_CASE("collector: without CUPTI the process is left untraced", "[collector][collector_object]")
{
    Environment env;
    env.unset("FP8SCOPE_MANIFEST");
    FakePlatform platform; // no CUPTI
    Collector c(platform);
    CHECK_FALSE(c.start());
    CHECK(c.state() == collector::State::Disabled);
    CHECK(platform.starts == 0);
    CHECK(c.session() == nullptr);
    CHECK_FALSE(c.post_rows([](TraceDb&) {}));
    CHECK_FALSE(c.start()); // once
    c.stop("exit");
    CHECK(c.state() == collector::State::Disabled);
}

// The callbacks ask whether they run in the traced process on every traced call: from a cached pid, which a fork's
// child must not inherit.
TEST_CASE("collector: the cached process id is the child's own after a fork", "[collector][collector_object]")
{
    REQUIRE(process_id() == ::getpid());
    const pid_t parent = process_id();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) // exit code 0 only if the child sees its own pid, not its parent's
        ::_exit(process_id() == ::getpid() && process_id() != parent ? 0 : 1);
    int status = -1;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(process_id() == parent);
}
