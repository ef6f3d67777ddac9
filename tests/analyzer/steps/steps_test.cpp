// Step finding (docs/analysis.md "Steps"): one synthetic scenario per source with exact step intervals, the
// warm-up rule, and the recorded samples with their NVTX ranges ignored (automatic detection).
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

StepOptions automatic_only(int warmup = 0)
{
    StepOptions options;
    options.ignore_markers = true;
    options.ignore_nvtx = true;
    options.warmup = warmup;
    return options;
}

int64_t nvtx_ranges_named(const TraceModel& model, std::string_view name)
{
    int64_t count = 0;
    for (size_t row = 0; row < model.nvtx.size(); ++row)
        count += model.strings[model.nvtx.text[row]] == name ? 1 : 0;
    return count;
}

} // namespace

TEST_CASE("automatic detection finds the recorded samples' steps within one", "[steps][samples]")
{
    for (const std::string file : { "h100-train-fp8.sqlite", "h100-train-bf16.sqlite", "h100-sample-syncs.sqlite" }) {
        const TraceModel model = load_recorded(file);
        const int64_t expected = nvtx_ranges_named(model, "train_step");
        const StepSet steps = find_steps(model, automatic_only());
        INFO(file << ": " << steps.detail);
        CHECK(steps.source == StepSource::Automatic);
        CHECK(std::abs(int64_t(steps.steps.size()) - expected) <= 1);

        // The automatic steps begin near the recorded ranges' starts: the median distance to the nearest range
        // start is under 5% of the median step length.
        const StepSet nvtx_all = find_steps(model, { .nvtx_pattern = {}, .warmup = 0 });
        REQUIRE(nvtx_all.steps.size() == size_t(expected));
        std::vector<int64_t> lengths_ns, distances_ns;
        for (const auto& step : nvtx_all.steps)
            lengths_ns.push_back(step.end_ns - step.start_ns);
        for (const auto& step : steps.steps) {
            int64_t nearest_ns = INT64_MAX;
            for (const auto& range : nvtx_all.steps)
                nearest_ns = std::min(nearest_ns, std::abs(range.start_ns - step.start_ns));
            distances_ns.push_back(nearest_ns);
        }
        std::sort(lengths_ns.begin(), lengths_ns.end());
        std::sort(distances_ns.begin(), distances_ns.end());
        CHECK(distances_ns[distances_ns.size() / 2] * 20 < lengths_ns[lengths_ns.size() / 2]);

        // With NVTX allowed, the recorded train_step ranges are the steps, warm-up removed.
        const StepSet nvtx = find_steps(model, {});
        CHECK(nvtx.source == StepSource::Nvtx);
        CHECK(int64_t(nvtx.steps.size()) == expected - 2);
        CHECK(nvtx.warmup_excluded == 2);
    }
}

namespace {

KernelSpec named_kernel(int64_t start_ns, int64_t end_ns, std::string name)
{
    return { .start_ns = start_ns, .end_ns = end_ns, .name = std::move(name) };
}

ApiSpec launch_call(int64_t at_ns)
{
    return { .api_start_ns = at_ns - 20, .api_end_ns = at_ns - 10 };
}

void check_steps(const StepSet& set, std::initializer_list<StepInterval> expected)
{
    INFO(set.detail);
    REQUIRE(set.steps.size() == expected.size());
    size_t i = 0;
    for (const StepInterval& e : expected) {
        INFO("step " << i);
        CHECK(set.steps[i].index == e.index);
        CHECK(set.steps[i].start_ns == e.start_ns);
        CHECK(set.steps[i].end_ns == e.end_ns);
        ++i;
    }
}

// Five steps of A, B, B, B after a 600 ns host pause, and a prologue kernel: the automatic rule's case.
Scenario loop_scenario()
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, launch_call(20), named_kernel(20, 50, "init"));
    for (int64_t step = 0; step < 5; ++step) {
        const int64_t base = 1000 * step + 100;
        s.launch(host, launch_call(base), named_kernel(base, base + 100, "A"));
        for (int64_t b = 1; b <= 3; ++b)
            s.launch(host, launch_call(base + 100 * b), named_kernel(base + 100 * b, base + 100 * b + 100, "B"));
    }
    return s;
}

} // namespace

TEST_CASE("step markers: one step per marker, the last one at most two median steps long", "[steps]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    const auto helper = s.thread(4242, 4243);
    for (int64_t i = 0; i < 4; ++i)
        s.step_marker(host, 100 + 100 * i, 10 + i);
    s.step_marker(helper, 150, 99); // another thread, fewer markers: ignored
    s.nvtx_range(host, 100, 200, "train_step");
    // Each step launches its kernel 5 ns after its marker (the call), and the GPU is idle at every marker, so the
    // device's steps begin at the markers (two clocks: the next test case).
    for (int64_t i = 0; i < 3; ++i)
        s.launch(host, launch_call(125 + 100 * i), named_kernel(125 + 100 * i, 190 + 100 * i, "k"));
    s.launch(host, launch_call(425), named_kernel(425, 1000, "long"));
    const TraceModel model = write_and_load(s, "markers");

    StepOptions all;
    all.warmup = 0;
    const StepSet steps = find_steps(model, all);
    CHECK(steps.source == StepSource::Markers);
    check_steps(steps, { { 10, 100, 200 }, { 11, 200, 300 }, { 12, 300, 400 }, { 13, 400, 600 } });

    const StepSet warm = find_steps(model, {});
    CHECK(warm.warmup_excluded == 2);
    check_steps(warm, { { 12, 300, 400 }, { 13, 400, 600 } });

    StepOptions no_markers;
    no_markers.ignore_markers = true;
    const StepSet nvtx = find_steps(model, no_markers);
    CHECK(nvtx.source == StepSource::Nvtx);
    CHECK(nvtx.warmup_excluded == 0); // one step: never all of them
    check_steps(nvtx, { { 0, 100, 200 } });
}

TEST_CASE("NVTX steps: the biggest family, to the next range unless the pause is longer than the step", "[steps]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    const auto other = s.thread(4242, 4243);
    s.nvtx_range(host, 100, 180, "ProfilerStep#5");
    s.nvtx_range(host, 200, 290, "ProfilerStep#6");
    s.nvtx_range(host, 210, 220, "ProfilerStep#60"); // nested in #6: not a step
    s.nvtx_range(host, 300, 350, "ProfilerStep#7");
    s.nvtx_range(host, 1000, 1100, "ProfilerStep#8"); // after a 650 ns pause, longer than #7
    s.nvtx_range(other, 100, 500, "step");
    s.nvtx_range(other, 600, 900, "step");
    s.nvtx_range(host, 100, 1100, "forward 1");
    // One kernel launched inside each ProfilerStep range, each done before the next range begins.
    for (const auto& [start, end] : { std::pair { 125, 170 }, { 225, 280 }, { 325, 340 }, { 1025, 1090 } })
        s.launch(host, launch_call(start), named_kernel(start, end, "k"));
    const TraceModel model = write_and_load(s, "nvtx");

    StepOptions options;
    options.warmup = 0;
    const StepSet steps = find_steps(model, options);
    CHECK(steps.source == StepSource::Nvtx);
    check_steps(steps, { { 5, 100, 200 }, { 6, 200, 300 }, { 7, 300, 350 }, { 8, 1000, 1100 } });

    options.nvtx_pattern = "forward \\d+";
    check_steps(find_steps(model, options), { { 1, 100, 1100 } });

    options.nvtx_pattern = "(";
    CHECK(check_nvtx_step_pattern("(").has_value());
    CHECK(!check_nvtx_step_pattern(kDefaultNvtxStepPattern).has_value());
    CHECK(find_steps(model, options).source != StepSource::Nvtx); // an invalid pattern matches nothing
}

TEST_CASE("automatic detection: steps begin at the anchor after the loop's largest regular gap", "[steps]")
{
    for (const Layout layout : { Layout::Fp8scope, Layout::Nsight }) {
        const TraceModel model = write_and_load(loop_scenario(), "loop", layout);
        const StepSet steps = find_steps(model, automatic_only());
        CHECK(steps.source == StepSource::Automatic);
        CHECK_THAT(steps.detail, Catch::Contains("'A'"));
        check_steps(
            steps, { { 0, 100, 1100 }, { 1, 1100, 2100 }, { 2, 2100, 3100 }, { 3, 3100, 4100 }, { 4, 4100, 4500 } });
        CHECK(find_steps(model, automatic_only(2)).steps.size() == 3);
    }
}

TEST_CASE("a trace with no activity has no steps", "[steps]")
{
    Scenario s;
    s.thread(4242, 4242);
    const StepSet steps = find_steps(write_and_load(s, "empty"), {});
    CHECK(steps.source == StepSource::WholeTrace);
    CHECK(steps.steps.empty());
    CHECK(std::string(step_source_name(StepSource::Automatic)) == "automatic");
}

TEST_CASE("a single step marker makes one step to the end of the trace, kept despite warm-up", "[steps]")
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.step_marker(host, 100, 7);
    s.launch(host, launch_call(125), named_kernel(125, 500, "long"));
    const StepSet steps = find_steps(write_and_load(s, "one-marker"), {});
    CHECK(steps.source == StepSource::Markers);
    CHECK(steps.warmup_excluded == 0);
    check_steps(steps, { { 7, 100, 500 } });
}

TEST_CASE("two clocks: a marker begins its step on the device when the work launched before it is done", "[steps]")
{
    // A GPU-bound loop: the host marks step i at 100 * i and launches its 250 ns kernel at once; the GPU runs them
    // back to back, so it reaches step i's kernel at 250 * i. The steps are the kernels, not the markers' intervals.
    Scenario s;
    const auto host = s.thread(4242, 4242);
    for (int64_t i = 0; i < 4; ++i) {
        const int64_t marker_ns = 1000 + 100 * i, start_ns = 1000 + 30 + 250 * i;
        s.step_marker(host, marker_ns, i);
        s.launch(host, { .api_start_ns = marker_ns + 5, .api_end_ns = marker_ns + 10 },
            named_kernel(start_ns, start_ns + 250, "k"));
    }
    StepOptions all;
    all.warmup = 0;
    const StepSet steps = find_steps(write_and_load(s, "gpu-bound"), all);
    CHECK(steps.source == StepSource::Markers);
    // Step 0 begins at its marker (the GPU idles until its kernel); step i > 0 when kernel i - 1 ends. The last runs
    // to the trace's end (its kernel's end, within two median steps).
    check_steps(steps, { { 0, 1000, 1280 }, { 1, 1280, 1530 }, { 2, 1530, 1780 }, { 3, 1780, 2030 } });
    for (size_t i = 0; i < steps.steps.size(); ++i)
        CHECK(steps.steps[i].host_start_ns == 1000 + 100 * int64_t(i)); // the markers, on the host's clock
}

namespace {

// Drops every GPU activity that starts at or after `at_ns`, as if the recording had stopped there.
template <typename Table> void cut_columns(Table& table, int64_t at_ns)
{
    const size_t rows
        = size_t(std::lower_bound(table.start_ns.begin(), table.start_ns.end(), at_ns) - table.start_ns.begin());
    table.start_ns.resize(rows);
    table.end_ns.resize(rows);
    table.device_id.resize(rows);
    table.stream_id.resize(rows);
    table.correlation_id.resize(rows);
}

void cut_activities(TraceModel& model, int64_t at_ns)
{
    cut_columns(model.kernels, at_ns);
    const size_t kernels = model.kernels.size();
    model.kernels.name.resize(kernels);
    model.kernels.short_name.resize(kernels);
    model.kernels.graph_id.resize(kernels);
    cut_columns(model.memcpys, at_ns);
    const size_t copies = model.memcpys.size();
    model.memcpys.bytes.resize(copies);
    model.memcpys.copy_kind.resize(copies);
    model.memcpys.src_kind.resize(copies);
    model.memcpys.dst_kind.resize(copies);
    cut_columns(model.memsets, at_ns);
    model.memsets.bytes.resize(model.memsets.size());
    model.memsets.mem_kind.resize(model.memsets.size());
}

} // namespace

TEST_CASE("automatic detection on recordings cut inside a step counts the whole steps, or one more", "[steps][samples]")
{
    for (const std::string file : { "h100-train-fp8.sqlite", "h100-train-bf16.sqlite", "h100-sample-syncs.sqlite" }) {
        const TraceModel full = load_recorded(file);
        StepOptions nvtx_options;
        nvtx_options.warmup = 0;
        const StepSet nvtx = find_steps(full, nvtx_options);
        for (const size_t whole_steps : { size_t(5), size_t(12) })
            for (const double fraction : { 0.0, 0.3, 0.7 }) {
                TraceModel model = full;
                const StepInterval& step = nvtx.steps.at(whole_steps);
                cut_activities(model, step.start_ns + int64_t(fraction * double(step.end_ns - step.start_ns)));
                const StepSet steps = find_steps(model, automatic_only());
                INFO(file << " cut at " << fraction << " of step " << whole_steps << ": " << steps.detail);
                CHECK(steps.source == StepSource::Automatic);
                CHECK(steps.steps.size() >= whole_steps);
                CHECK(steps.steps.size() <= whole_steps + 1);
            }
    }
}
