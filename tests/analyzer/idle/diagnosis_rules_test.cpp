// The zoo's rule changes (docs/accuracy.md "What the zoo found") on synthetic traces with exact answers: each scenario
// is a pattern a real job showed (docs/accuracy.md lists the zoo workload that proves it) and the figure the corrected
// rule must give.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

int64_t cause_ns(const BubbleTotals& totals, BubbleCause cause)
{
    return totals.cause_ns[size_t(cause)];
}

// Every step but the last marked one, which only holds the launches that end the previous step's last gap.
Report analyze_all_steps(const TraceModel& model, int64_t last_step)
{
    ReportOptions options;
    options.steps.warmup = 0;
    options.last_step = last_step;
    return analyze(model, options);
}

// Launches `names` back to back from `at`: calls of 2 us, 5 us apart (the framework's 3 us between them), kernels
// of 20 us that start 2 us after their call at the earliest, so the GPU runs behind the host. Returns the end of
// the last kernel; `next_call` receives the time the next call would start.
int64_t launch_all(Scenario& s, HostThread t, int64_t at, const std::vector<std::string>& names, int64_t& next_call)
{
    int64_t gpu_free = 0;
    next_call = at;
    for (const std::string& name : names) {
        const int64_t start = std::max(next_call + 4'000, gpu_free);
        s.launch(t, { next_call, next_call + 2'000 }, { start, start + 20'000, name });
        gpu_free = start + 20'000;
        next_call += 5'000;
    }
    return gpu_free;
}

// `kernels` GEMMs as launch_all() launches them; returns the end of the last kernel.
int64_t busy_burst(Scenario& s, HostThread t, int64_t at, int kernels, int64_t* last_call_end = nullptr)
{
    int64_t next_call = 0;
    const int64_t drained = launch_all(s, t, at, std::vector<std::string>(size_t(kernels), "gemm_kernel"), next_call);
    if (last_call_end)
        *last_call_end = next_call - 5'000 + 2'000;
    return drained;
}

constexpr int64_t kStallNs = 15'000'000; // the data loader's sleep of the zoo's hf_loader_sleep

} // namespace

TEST_CASE("item 1: a data-loader stall after the step's .item() is host, the sync keeps only its wait",
    "[bubbles][rule1][issue25]")
{
    // Each step: 40 kernels, then .item() (a stream sync that returns 3 us after the GPU drains), then the data
    // loader sleeps 15 ms with no CUDA call, and the next step launches.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    for (int step = 0; step < 4; ++step) {
        s.step_marker(t, at, step);
        int64_t last_call_end = 0;
        const int64_t drained = busy_burst(s, t, at, 40, &last_call_end);
        s.sync(t, last_call_end + 1'000, drained + 3'000, schema::SyncType::StreamSynchronize, 7u);
        at = drained + 3'000 + kStallNs;
    }
    s.step_marker(t, at, 4);
    busy_burst(s, t, at, 40);
    const Report r = analyze_all_steps(write_and_load(s, "issue25-item1-loader-after-item"), 3);
    REQUIRE(r.steps.steps.size() == 4);
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        CAPTURE(row.step_index);
        // The sync owns the 3 us until it returned, and the next launch's 4 us latency (at the start of the next
        // step, behind its marker); the 15 ms silence in between is host.
        CHECK(cause_ns(row.totals, BubbleCause::Host) == kStallNs);
        CHECK(cause_ns(row.totals, BubbleCause::Sync) == (row.step_index == 0 ? 3'000 : 7'000));
        CHECK(cause_ns(row.totals, BubbleCause::Launch) == (row.step_index == 0 ? 4'000 : 0));
    }
    const WhatIf w = estimate_what_if(r);
    // Removing the sync gives back 6 us a step on average, not the loader's 15 ms.
    CHECK(w.mean_step_ns - w.without_syncs_ns == (3'000 + 3 * 7'000) / 4);
    REQUIRE_FALSE(w.recommendations.empty());
    CHECK(w.recommendations.front().kind == RecommendationKind::ReduceHostWork);
    CHECK(w.recommendations.front().saving_per_step_ns == kStallNs);
    for (const Recommendation& rec : w.recommendations)
        CHECK(rec.kind != RecommendationKind::RemoveSync); // 6 us of a 16 ms step is below the 1% floor
    // Each sync is charged its own 3 us and the 4 us of the launch after it (the last one's 4 us lie in step 4).
    REQUIRE(r.syncs.calls.size() == 4);
    for (const SyncCallReport& call : r.syncs.calls)
        CHECK(call.idle_caused_ns == (call.step == 3u ? 3'000 : 7'000));
}

TEST_CASE("item 1: a stall before a sync that no longer waits is host too", "[bubbles][rule1][issue25]")
{
    // The thread sleeps 15 ms right after launching, the GPU drains after ~0.2 ms, and then .item() returns at once.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    for (int step = 0; step < 3; ++step) {
        s.step_marker(t, at, step);
        int64_t last_call_end = 0;
        busy_burst(s, t, at, 10, &last_call_end);
        const int64_t sync_start = last_call_end + kStallNs;
        s.sync(t, sync_start, sync_start + 2'000, schema::SyncType::StreamSynchronize, 7u);
        at = sync_start + 2'000 + 10'000;
    }
    s.step_marker(t, at, 3);
    busy_burst(s, t, at, 10);
    const Report r = analyze_all_steps(write_and_load(s, "issue25-item1-stall-before-sync"), 2);
    REQUIRE(r.steps.steps.size() == 3);
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        CAPTURE(row.step_index);
        // Host: from the GPU draining to the sync's call; sync: the call itself and the 10 us to the next launch
        // call (shorter than the thread's 100 us stall threshold), then that launch's 4 us latency, which falls in
        // the next step.
        const int64_t sync = (row.step_index == 0 ? 0 : 4'000) + 2'000 + 10'000;
        CHECK(cause_ns(row.totals, BubbleCause::Sync) == sync);
        CHECK(cause_ns(row.totals, BubbleCause::Launch) == (row.step_index == 0 ? 4'000 : 0));
        CHECK(cause_ns(row.totals, BubbleCause::Host)
            == row.totals.idle_ns - sync - cause_ns(row.totals, BubbleCause::Launch));
        CHECK(cause_ns(row.totals, BubbleCause::Host) > kStallNs - 300'000);
    }
}

TEST_CASE(
    "item 1: a sync that waits for the GPU and relaunches at once keeps the whole gap", "[bubbles][rule1][issue25]")
{
    // A copy engine transfer on another stream makes the GPU idle on the compute stream while the host waits in a
    // device sync; the thread relaunches 20 us after the sync returns: no silence, so the gap is all sync.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    for (int step = 0; step < 3; ++step) {
        s.step_marker(t, at, step);
        int64_t last_call_end = 0;
        const int64_t drained = busy_burst(s, t, at, 10, &last_call_end);
        // The sync waits 2 ms past the drain (a host function, say): the GPU is idle and the host is blocked.
        s.sync(t, last_call_end + 1'000, drained + 2'000'000, schema::SyncType::ContextSynchronize);
        at = drained + 2'000'000 + 20'000;
    }
    s.step_marker(t, at, 3);
    busy_burst(s, t, at, 10);
    const Report r = analyze_all_steps(write_and_load(s, "issue25-item1-pure-sync"), 2);
    REQUIRE(r.steps.steps.size() == 3);
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        CAPTURE(row.step_index);
        CHECK(cause_ns(row.totals, BubbleCause::Host) == 0);
        // The 2 ms wait and the 20 us to the next launch call; the launch's own 4 us open the next step.
        const int64_t sync = (row.step_index == 0 ? 0 : 4'000) + 2'000'000 + 20'000;
        CHECK(cause_ns(row.totals, BubbleCause::Sync) == sync);
    }
    const WhatIf w = estimate_what_if(r);
    REQUIRE_FALSE(w.recommendations.empty());
    CHECK(w.recommendations.front().kind == RecommendationKind::RemoveSync);
}

namespace {

// One step of a job without optimizer kernels: `names` launched back to back (calls 5 us apart, 20 us kernels, so
// the GPU runs behind the host), then `syncs` host-blocking calls that return when the GPU drains, then the host
// pauses `pause_ns` before the next step. Returns the time the next step starts.
int64_t sync_closed_step(
    Scenario& s, HostThread t, int64_t at, const std::vector<std::string>& names, int syncs, int64_t pause_ns)
{
    int64_t call = 0;
    const int64_t gpu_free = launch_all(s, t, at, names, call);
    int64_t host = call;
    for (int i = 0; i < syncs; ++i) {
        const int64_t end = std::max(host + 1'000, gpu_free + 3'000);
        s.sync(t, host, end, i == 0 ? schema::SyncType::StreamSynchronize : schema::SyncType::ContextSynchronize,
            i == 0 ? std::optional<uint32_t>(7u) : std::nullopt);
        host = end + 2'000;
    }
    return host + pause_ns;
}

StepSet automatic_steps(const TraceModel& model)
{
    StepOptions options;
    options.ignore_markers = true;
    options.ignore_nvtx = true;
    options.warmup = 0;
    return find_steps(model, options);
}

// The automatic steps of the scenario, checked to start exactly at `truth`; returned for further checks.
StepSet check_automatic_starts(const Scenario& s, const std::string& name, const std::vector<int64_t>& truth)
{
    StepSet steps = automatic_steps(write_and_load(s, name));
    CAPTURE(steps.detail);
    REQUIRE(steps.steps.size() == truth.size());
    for (size_t i = 0; i < truth.size(); ++i) {
        CAPTURE(i);
        CHECK(steps.steps[i].start_ns == truth[i]);
    }
    return steps;
}

} // namespace

TEST_CASE(
    "item 2: a sync per step finds the steps a kernel sequence with a longer period misses", "[steps][syncs][issue25]")
{
    // 40 steps of a hand-written SGD loop (no optimizer kernels) closed by torch.cuda.synchronize(). Every 4th step
    // also rolls the amax history, so the kernel sequence alone repeats only 10 times.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    std::vector<int64_t> truth;
    for (int step = 0; step < 40; ++step) {
        std::vector<std::string> names { "fwd_gemm", "gelu", "fwd_gemm2", "bwd_gemm2", "gelu_bwd", "bwd_gemm",
            "sgd_mul_sub", "sgd_mul_sub" };
        if (step % 4 == 3)
            names.push_back("amax_history_roll");
        truth.push_back(at + 4'000); // the step's first kernel
        at = sync_closed_step(s, t, at, names, 1, 300'000);
    }
    const StepSet steps = check_automatic_starts(s, "issue25-item2-sgd-sync", truth);
    CHECK(steps.source == StepSource::Automatic);
    CHECK_THAT(steps.detail, Catch::Contains("host-blocking") && Catch::Contains("1 per step"));
}

TEST_CASE("item 2: 400 launches of one kernel and two syncs per step give 12 steps, not 400 sub-steps",
    "[steps][syncs][issue25]")
{
    // The CUDA C++ pattern: per step 400 tiny kernels of one name, a 3 ms host stall, a stream sync and a device
    // sync.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    std::vector<int64_t> truth;
    const std::vector<std::string> names(400, "tiny_kernel");
    for (int step = 0; step < 12; ++step) {
        truth.push_back(at + 4'000);
        at = sync_closed_step(s, t, at, names, 2, 3'000'000);
    }
    check_automatic_starts(s, "issue25-item2-cuda-program", truth);
}

TEST_CASE("item 2: a sync every 5th step leaves the kernel sequence's steps alone", "[steps][syncs][issue25]")
{
    // `.item()` logging every 5 steps of a loop without optimizer kernels; every step begins after a 300 us pause
    // (the data loader), so the kernel sequence's steps are the loop's.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    std::vector<int64_t> truth;
    for (int step = 0; step < 30; ++step) {
        truth.push_back(at + 4'000);
        at = sync_closed_step(
            s, t, at, { "embed", "fwd_gemm", "gelu", "bwd_gemm", "sgd_update" }, step % 5 == 4 ? 1 : 0, 300'000);
    }
    const StepSet steps = check_automatic_starts(s, "issue25-item2-sync-every-5", truth);
    CHECK_THAT(steps.detail, Catch::Contains("one step in 5"));
}

TEST_CASE("item 8: host silence inside the step's launches is framework work a graph removes, between steps it stays",
    "[bubbles][whatif][issue25]")
{
    // An eager step: 30 launches 5 us apart with 3 us kernels (the GPU waits for each launch), two 300 us silences
    // of the framework's Python (autograd, the optimizer) after launches 10 and 20, then .item() and a 2 ms data
    // loader sleep before the next step.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    auto eager_step = [&](int64_t begin, bool with_tail) {
        int64_t call = begin, gpu_free = 0;
        for (int i = 0; i < 30; ++i) {
            const int64_t start = std::max(call + 4'000, gpu_free);
            s.launch(t, { call, call + 2'000 }, { start, start + 3'000, "elementwise_kernel" });
            gpu_free = start + 3'000;
            call += (i == 10 || i == 20) ? 2'000 + 300'000 : 5'000;
        }
        if (!with_tail)
            return int64_t(0);
        const int64_t sync_end = gpu_free + 3'000;
        s.sync(t, call - 5'000 + 3'000, sync_end, schema::SyncType::StreamSynchronize, 7u);
        return sync_end + 2'000'000;
    };
    for (int step = 0; step < 4; ++step) {
        s.step_marker(t, at, step);
        at = eager_step(at, true);
    }
    s.step_marker(t, at, 4);
    eager_step(at, false); // the launches that end the last step's loader gap
    const Report r = analyze_all_steps(write_and_load(s, "issue25-item8-framework-host"), 3);
    REQUIRE(r.steps.steps.size() == 4);
    for (const DeviceStepBubbles& row : r.bubbles.per_device_step) {
        CAPTURE(row.step_index);
        // Each silence leaves the GPU idle from the kernel's end (call + 7 us) to the next kernel's start
        // (call + 2 us + 300 us + 4 us): 299 us, inside the step's launches.
        CHECK(row.totals.host_in_launches_ns == 2 * 299'000);
        // The loader's 2 ms after the sync returned is host too, but between steps.
        CHECK(cause_ns(row.totals, BubbleCause::Host) == 2 * 299'000 + 2'000'000);
    }
    const WhatIf w = estimate_what_if(r);
    const Recommendation* host = nullptr;
    const Recommendation* graphs = nullptr;
    for (const Recommendation& rec : w.recommendations) {
        host = rec.kind == RecommendationKind::ReduceHostWork ? &rec : host;
        graphs = rec.kind == RecommendationKind::CudaGraphs ? &rec : graphs;
    }
    REQUIRE(host);
    CHECK(host->saving_per_step_ns == 2'000'000); // only the loader
    REQUIRE(graphs);
    CHECK_THAT(graphs->reason, Catch::Contains("framework's host work"));
    // The graph replay: the step without its launch gaps (down to the graph's 300 ns), without the framework's
    // silences and without the dispatch after the sync returned (the next launch's 4 us); the sync's wait and the
    // loader stay.
    const BubbleTotals& middle = r.bubbles.per_device_step[1].totals;
    CHECK(middle.sync_after_return_ns == 4'000);
    CHECK(w.without_launch_overhead_ns
        == middle.step_ns - middle.graph_removable_ns - middle.host_in_launches_ns - middle.sync_after_return_ns);
}

TEST_CASE("an evaluation pass after the update, closed by its .item(), stays in its step", "[steps][syncs][issue25]")
{
    // 15 steps: data copy, forward and backward GEMMs, the optimizer; every 5th step then evaluates (2 forward GEMMs)
    // and reads the loss with .item(). The next step begins after a 300 us pause at the loop's top.
    Scenario s;
    const HostThread t = s.thread(4242, 10);
    int64_t at = 1'000'000;
    std::vector<int64_t> truth;
    for (int step = 0; step < 15; ++step) {
        truth.push_back(at + 4'000);
        std::vector<std::string> names { "copy_batch_kernel", "fwd_gemm", "gelu", "bwd_gemm", "gelu_bwd",
            "multi_tensor_apply_kernel", "multi_tensor_apply_kernel" };
        const bool eval = step % 5 == 4;
        if (eval)
            for (const char* name : { "eval_embed", "fwd_gemm", "gelu", "fwd_gemm", "loss_reduce" })
                names.push_back(name);
        // The eval's .item() closes the step; other steps end with the update.
        at = sync_closed_step(s, t, at, names, eval ? 1 : 0, 300'000);
    }
    check_automatic_starts(s, "issue25-eval-after-update", truth);
}

TEST_CASE("steps keep their distance from the update when a drift adds kernels midway", "[steps][issue25]")
{
    // 20 steps, zoo fp8_delayed_drift's pattern: a data copy after a 1 ms pause at the loop's top, the forward, then
    // 2 ms of Python before the backward (the longest device idle: the anchor), the backward, the optimizer and an
    // amax update, 66 activities. From step 10 the planted drift adds 4 element-wise kernels after the anchor, so the
    // anchor's distance to the next step's start grows by 4 in half the steps; the update's does not.
    Scenario s;
    const HostThread t = s.thread(4243, 11);
    int64_t at = 1'000'000;
    std::vector<int64_t> truth;
    for (int step = 0; step < 20; ++step) {
        truth.push_back(at + 4'000);
        int64_t next_call = 0;
        std::vector<std::string> forward { "copy_batch_kernel", "embed" };
        for (int layer = 0; layer < 12; ++layer)
            forward.insert(forward.end(), { "fwd_gemm", "act" });
        launch_all(s, t, at, forward, next_call);
        std::vector<std::string> backward { "bwd_prep" };
        if (step >= 10)
            backward.insert(backward.end(), { "act", "act", "act", "act" });
        for (int layer = 0; layer < 12; ++layer)
            backward.insert(backward.end(), { "bwd_gemm", "act_bwd", "bwd_gemm" });
        for (const char* name : { "multi_tensor_apply_kernel", "multi_tensor_apply_kernel", "amax_update" })
            backward.push_back(name);
        launch_all(s, t, next_call + 2'000'000, backward, next_call);
        at = next_call + 1'000'000;
    }
    const StepSet steps = check_automatic_starts(s, "issue25-drift-midway", truth);
    CHECK_THAT(steps.detail, Catch::Contains("after the optimizer's last kernel"));
}

TEST_CASE("torch.compile reduce-overhead: graphs from two threads, an eager first step, a foreach copy at the top",
    "[steps][graphs][issue25]")
{
    // Zoo compile_reduce_overhead's pattern. The loop's thread launches the forward's graph, autograd's thread the
    // backward's; the eager optimizer (a foreach add and a fused Adam, both multi_tensor_apply) follows, then the
    // loss is copied out. The next step begins after a 400 us pause with a foreach copy into the graph's inputs (an
    // optimizer-named kernel, not an update). Step 0 runs eagerly (compiling) and ends with the same update.
    Scenario s;
    const HostThread loop = s.thread(4244, 12), autograd = s.thread(4244, 13);
    int64_t at = 1'000'000;
    auto eager = [&](HostThread t, const std::string& name) {
        s.launch(t, { at, at + 2'000 }, { at + 4'000, at + 9'000, name });
        at += 20'000;
    };
    auto graph = [&](HostThread t, int64_t id) {
        const uint32_t launch = s.launch(t, { at, at + 10'000, "cudaGraphLaunch_v10000" },
            { .start_ns = at + 12'000, .end_ns = at + 17'000, .name = "graph_k0", .graph_id = id });
        for (int k = 1; k < 6; ++k)
            s.more_of(launch,
                { .start_ns = at + 12'000 + k * 6'000,
                    .end_ns = at + 17'000 + k * 6'000,
                    .name = "graph_k" + std::to_string(k),
                    .graph_id = id });
        at += 60'000;
    };
    auto update = [&] {
        at += 300'000; // the optimizer's Python
        eager(loop, "multi_tensor_apply_kernel<BinaryOpScalarFunctor>");
        eager(loop, "multi_tensor_apply_kernel<FusedAdamMathFunctor>");
        at += 100'000;
        eager(loop, "copy_loss_kernel");
    };
    std::vector<int64_t> truth { at + 4'000 };
    for (const char* name : { "fwd_a", "fwd_b", "fwd_c", "fwd_d" })
        eager(loop, name);
    for (const char* name : { "bwd_a", "bwd_b", "bwd_c", "bwd_d" })
        eager(autograd, name);
    update();
    for (int step = 1; step < 8; ++step) {
        at += 400'000;
        truth.push_back(at + 4'000);
        eager(loop, "multi_tensor_apply_kernel<UnaryOpFunctor>");
        graph(loop, 5);
        at += 200'000;
        graph(autograd, 8);
        update();
    }
    const StepSet steps = check_automatic_starts(s, "issue25-reduce-overhead", truth);
    CHECK_THAT(steps.detail, Catch::Contains("on 2 threads") && Catch::Contains("after 1 eager step"));
}
