// The sync report (docs/analysis.md "Syncs"): host-blocking calls made by hand here (so these tests do not depend
// on find_host_blocking_calls), one scenario per rule, and the recorded syncs sample.
#include "classes_test_support.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/idle/syncs.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// The host-blocking call for API row `api_index` of the model, as find_host_blocking_calls would give it.
HostBlockingCall call_of(const TraceModel& model, size_t api_index, HostBlockingKind kind)
{
    return { .api_index = api_index,
        .start_ns = model.api_calls.start_ns[api_index],
        .end_ns = model.api_calls.end_ns[api_index],
        .global_tid = model.api_calls.global_tid[api_index],
        .kind = kind,
        .device_id = 0u,
        .stream_id = std::nullopt };
}

// Every API call whose name contains `fragment`, as host-blocking calls, in start order.
std::vector<HostBlockingCall> calls_named(const TraceModel& model, std::string_view fragment, HostBlockingKind kind)
{
    std::vector<HostBlockingCall> calls;
    for (size_t i = 0; i < model.api_calls.size(); ++i) {
        if (model.strings[model.api_calls.name[i]].find(fragment) != std::string_view::npos)
            calls.push_back(call_of(model, i, kind));
    }
    return calls;
}

Bubble sync_bubble(int64_t start_ns, int64_t end_ns, size_t call)
{
    return { .step_index = 0,
        .start_ns = start_ns,
        .end_ns = end_ns,
        .device_id = 0,
        .cause = BubbleCause::Sync,
        .sync_call = call,
        .next_api_index = std::nullopt };
}

} // namespace

TEST_CASE("sync report: NVTX path is the stack of ranges open on the calling thread", "[syncs]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    const auto other = s.thread(10, 11);
    s.nvtx_range(host, 0, 1000, "train_step");
    s.nvtx_range(host, 100, 400, "forward"); // closed before the sync
    s.nvtx_range(host, 500, 700, "loss");
    s.nvtx_range(host, 520, 540, "item"); // nested in loss, closed before the sync
    s.nvtx_range(host, 550, 560, "sync_here"); // starts exactly at the sync: open
    s.nvtx_range(other, 0, 1000, "dataloader"); // another thread: never in this thread's path
    s.sync(host, 550, 650, schema::SyncType::StreamSynchronize, 7u);
    s.sync(host, 700, 720, schema::SyncType::ContextSynchronize); // "loss" ended at 700: closed
    s.sync(host, 1000, 1010, schema::SyncType::ContextSynchronize); // no range open
    const TraceModel model = load_scenario(s, "syncs_nvtx_path");

    const auto calls = calls_named(model, "Synchronize", HostBlockingKind::StreamSync);
    REQUIRE(calls.size() == 3);
    const SyncReport report = build_sync_report(model, make_steps({ { 0, 2000 } }), calls, {});
    REQUIRE(report.calls.size() == 3);
    CHECK(report.calls[0].nvtx_path == "train_step/loss/sync_here");
    CHECK(report.calls[1].nvtx_path == "train_step");
    CHECK(report.calls[2].nvtx_path.empty());
    CHECK(model.strings[report.calls[0].api_name] == "cudaStreamSynchronize_v3020");
    CHECK(report.calls[0].duration_ns == 100);
    CHECK(report.calls[0].start_ns == 550);
}

TEST_CASE("sync report: idle caused is the sum of the sync bubbles charged to the call", "[syncs]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.sync(host, 100, 200, schema::SyncType::StreamSynchronize, 7u);
    s.sync(host, 300, 400, schema::SyncType::StreamSynchronize, 7u);
    const TraceModel model = load_scenario(s, "syncs_idle");
    const auto calls = calls_named(model, "Synchronize", HostBlockingKind::StreamSync);
    REQUIRE(calls.size() == 2);

    std::vector<Bubble> bubbles { sync_bubble(200, 230, 0), sync_bubble(230, 250, 0), sync_bubble(400, 470, 1) };
    Bubble not_sync = sync_bubble(500, 900, 1);
    not_sync.cause = BubbleCause::Host; // names a call but is not a sync bubble: ignored
    bubbles.push_back(not_sync);
    bubbles.push_back(sync_bubble(0, 1000, 7)); // out of range: ignored
    Bubble no_call = sync_bubble(0, 1000, 0);
    no_call.sync_call.reset();
    bubbles.push_back(no_call);

    const SyncReport report = build_sync_report(model, make_steps({ { 0, 1000 } }), calls, bubbles);
    REQUIRE(report.calls.size() == 2);
    CHECK(report.calls[0].idle_caused_ns == 50);
    CHECK(report.calls[1].idle_caused_ns == 70);
    CHECK(report.total.idle_caused_ns == 120);
    CHECK(report.total.duration_ns == 200);
    CHECK(report.total.count == 2);
}

TEST_CASE("sync report: counts per step by the step that contains the call's start, summary per API name", "[syncs]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.sync(host, 50, 60, schema::SyncType::StreamSynchronize, 7u); // before the steps
    s.sync(host, 100, 130, schema::SyncType::StreamSynchronize, 7u); // step 0
    s.sync(host, 150, 160, schema::SyncType::ContextSynchronize); // step 0
    s.sync(host, 190, 250, schema::SyncType::StreamSynchronize, 7u); // starts in step 0, ends in step 1
    s.sync(host, 200, 220, schema::SyncType::EventSynchronize); // step 1 (starts at its start)
    s.sync(host, 300, 305, schema::SyncType::ContextSynchronize); // after the steps (end is exclusive)
    const TraceModel model = load_scenario(s, "syncs_per_step");
    const auto calls = calls_named(model, "Synchronize", HostBlockingKind::StreamSync);
    REQUIRE(calls.size() == 6);

    const SyncReport report = build_sync_report(model, make_steps({ { 100, 200 }, { 200, 300 } }), calls, {});
    REQUIRE(report.calls.size() == 6);
    CHECK_FALSE(report.calls[0].step.has_value());
    CHECK(report.calls[1].step == 0u);
    CHECK(report.calls[3].step == 0u);
    CHECK(report.calls[4].step == 1u);
    CHECK_FALSE(report.calls[5].step.has_value());
    REQUIRE(report.per_step.size() == 2);
    CHECK(report.per_step[0].count == 3);
    CHECK(report.per_step[0].duration_ns == 100);
    CHECK(report.per_step[1].count == 1);
    CHECK(report.outside_steps.count == 2);
    CHECK(report.outside_steps.duration_ns == 15);

    // Most total duration first: stream syncs (30 + 60), context (10), event (20) -> stream, event, context.
    REQUIRE(report.by_api.size() == 3);
    CHECK(model.strings[report.by_api[0].api_name] == "cudaStreamSynchronize_v3020");
    CHECK(report.by_api[0].count == 2);
    CHECK(report.by_api[0].duration_ns == 90);
    CHECK(report.by_api[0].outside_steps == 1);
    CHECK(report.by_api[0].per_step[0].count == 2);
    CHECK(report.by_api[0].per_step[1].count == 0);
    CHECK(model.strings[report.by_api[1].api_name] == "cudaEventSynchronize_v3020");
    CHECK(report.by_api[1].per_step[1].duration_ns == 20);
    CHECK(report.by_api[2].count == 1);
    CHECK(report.by_api[2].outside_steps == 1);
}

TEST_CASE("sync report: a call that is not a row of the API table is left out", "[syncs]")
{
    Scenario s;
    const auto host = s.thread(10, 10);
    s.sync(host, 100, 130, schema::SyncType::StreamSynchronize, 7u);
    const TraceModel model = load_scenario(s, "syncs_bad_index");
    auto calls = calls_named(model, "Synchronize", HostBlockingKind::StreamSync);
    HostBlockingCall bad = calls[0];
    bad.api_index = 1000;
    calls.insert(calls.begin(), bad);
    const SyncReport report = build_sync_report(model, make_steps({ { 0, 1000 } }), calls, {});
    REQUIRE(report.calls.size() == 1);
    CHECK(report.calls[0].call == 1);
    CHECK(report.total.count == 1);
}

TEST_CASE("the recorded syncs sample: one stream, device and event sync per step, inside train_step", "[syncs][sample]")
{
    const TraceModel model = load_sample("h100-sample-syncs.sqlite");
    const StepSet steps = nvtx_steps(model, "train_step");
    REQUIRE(steps.steps.size() == 20);
    auto calls = calls_named(model, "Synchronize", HostBlockingKind::StreamSync);
    REQUIRE(calls.size() == 60);
    const SyncReport report = build_sync_report(model, steps, calls, {});
    REQUIRE(report.calls.size() == 60);
    for (const SyncCallReport& row : report.calls) {
        CHECK(row.nvtx_path == "train_step");
        CHECK(row.step.has_value());
    }
    for (const SyncStepCounts& step : report.per_step)
        CHECK(step.count == 3);
    REQUIRE(report.by_api.size() == 3);
    for (const SyncApiSummary& summary : report.by_api) {
        CHECK(summary.count == 20);
        CHECK(summary.outside_steps == 0);
    }
}

TEST_CASE("the recorded syncs sample end to end: steps, host-blocking calls, bubbles, sync report", "[syncs][sample]")
{
    const TraceModel model = load_sample("h100-sample-syncs.sqlite");
    const StepSet steps = find_steps(model);
    const auto blocking = find_host_blocking_calls(model);
    const BubbleAnalysis bubbles = analyze_bubbles(model, steps, blocking);
    const SyncReport report = build_sync_report(model, steps, blocking, bubbles.bubbles);
    REQUIRE(report.calls.size() == blocking.size());
    // Every idle nanosecond the bubble analysis charged to a sync is charged to exactly one call here.
    CHECK(report.total.idle_caused_ns + report.outside_steps.idle_caused_ns
        == bubbles.total.cause_ns[static_cast<size_t>(BubbleCause::Sync)]);
    CHECK(report.total.idle_caused_ns > 0);
    CHECK(report.total.count + report.outside_steps.count == static_cast<int64_t>(blocking.size()));
    REQUIRE_FALSE(report.per_step.empty());
    for (const SyncCallReport& row : report.calls) {
        if (row.step)
            CHECK(row.nvtx_path == "train_step");
    }
    // Per step (after warm-up): one stream, one device and one event sync, and two device-to-host copies.
    for (const SyncStepCounts& step : report.per_step)
        CHECK(step.count == 5);
    // 20 steps, 2 of them warm-up: 18 of each kind of call inside the steps; cudaMalloc/cudaFree/cudaMemset ran
    // before the loop.
    for (const SyncApiSummary& summary : report.by_api) {
        INFO(model.strings[summary.api_name]);
        CHECK((summary.count == 18 || summary.count == 0));
    }
}
