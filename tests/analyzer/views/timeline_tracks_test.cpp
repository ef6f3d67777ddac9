// The timeline's tracks and lanes, launch flows, sync markers and item details (docs/analysis.md "Queries for the
// viewer"): one scenario written through the real writer with a known layout, and the layout's invariants on the
// recorded traces.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "timeline_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// Every lane sorted by start and free of overlaps; every item once; block sums consistent. Returns the items.
size_t check_layout(const TimelineIndex& index)
{
    size_t items = 0;
    for (const TimelineTrack& track : index.tracks) {
        INFO(track.name);
        REQUIRE_FALSE(track.lanes.empty());
        size_t in_track = 0;
        for (const TimelineLane& lane : track.lanes) {
            REQUIRE(lane.end_ns.size() == lane.size());
            REQUIRE(lane.block_time_ns.size() == lane.size() / kLaneBlockItems + 1);
            for (size_t i = 0; i < lane.size(); ++i) {
                REQUIRE(lane.end_ns[i] >= lane.start_ns[i]);
                if (i > 0)
                    REQUIRE(lane.start_ns[i] >= lane.end_ns[i - 1]);
            }
            in_track += lane.size();
        }
        CHECK(track.items == in_track);
        items += in_track;
    }
    return items;
}

struct Scene {
    TraceModel model;
    Report report;
    TimelineIndex index;
};

size_t api_row(const TraceModel& model, std::string_view name)
{
    for (size_t i = 0; i < model.api_calls.size(); ++i)
        if (model.strings[model.api_calls.name[i]] == name)
            return i;
    FAIL("no API call " << name);
    return 0;
}

size_t kernel_row(const TraceModel& model, int64_t start_ns)
{
    const auto it = std::ranges::find(model.kernels.start_ns, start_ns);
    REQUIRE(it != model.kernels.start_ns.end());
    return static_cast<size_t>(it - model.kernels.start_ns.begin());
}

const DetailField& field(const ItemDetails& details, std::string_view label)
{
    for (const DetailField& f : details.fields)
        if (f.label == label)
            return f;
    FAIL("no field " << label << " in the details of " << details.title);
    throw 0;
}

// One thread: a train_step range with nested NVTX ranges, an FP8 GEMM launched by a runtime call with a driver call
// inside it, a stream sync that drains the GPU, a kernel, a copy, a three-kernel graph launch and a kernel on another
// stream that no call launched.
Scene scene()
{
    Scenario s;
    const HostThread host = s.thread(4242, 1234, "python3");
    s.nvtx_range(host, 0, 10000, "train_step");
    s.nvtx_range(host, 50, 400, "forward");
    s.nvtx_range(host, 60, 100, "layer0");
    s.nvtx_range(host, 120, 200, "layer1");
    s.nvtx_mark(host, 300, "checkpoint");
    s.launch(host, { .api_start_ns = 100, .api_end_ns = 110 },
        { .start_ns = 120, .end_ns = 300, .name = "sm90_xmma_gemm_e4m3e4m3_f32" });
    s.api_call(host,
        { .api_start_ns = 102,
            .api_end_ns = 108,
            .name = "cuLaunchKernel",
            .event_class = schema::EventClass::CudaDriver });
    s.sync(host, 310, 600, schema::SyncType::StreamSynchronize, 7);
    s.launch(host, { .api_start_ns = 610, .api_end_ns = 620 }, { .start_ns = 630, .end_ns = 700, .name = "add" });
    s.memcpy(host, { .api_start_ns = 700, .api_end_ns = 710, .name = "cudaMemcpyAsync_v3020" },
        { .start_ns = 720, .end_ns = 800, .bytes = 4096 });
    const uint32_t graph = s.launch(host, { .api_start_ns = 800, .api_end_ns = 810, .name = "cudaGraphLaunch_v10000" },
        { .start_ns = 820, .end_ns = 830, .name = "g0", .graph_id = 5 });
    s.more_of(graph, { .start_ns = 830, .end_ns = 840, .name = "g1", .graph_id = 5 });
    s.more_of(graph, { .start_ns = 840, .end_ns = 850, .name = "g2", .graph_id = 5 });
    s.orphan_kernel({ .start_ns = 900, .end_ns = 950, .name = "orphan", .stream_id = 8 });

    Scene scene;
    scene.model = write_and_load(s, "timeline-scene");
    ReportOptions options;
    options.steps.warmup = 0;
    scene.report = analyze(scene.model, options);
    scene.index = build_timeline(scene.model, scene.report);
    return scene;
}

} // namespace

TEST_CASE(
    "timeline tracks: one per stream, thread, NVTX thread, steps, bubbles and syncs, in display order", "[timeline]")
{
    const Scene s = scene();
    std::vector<std::string> names;
    for (const TimelineTrack& t : s.index.tracks)
        names.push_back(t.name);
    CHECK(names
        == std::vector<std::string> { "steps", "GPU 0 · bubbles", "GPU 0 · stream 7", "GPU 0 · stream 8",
            "thread 1234 (python3)", "syncs · thread 1234 (python3)", "NVTX · thread 1234 (python3)" });
    CHECK(check_layout(s.index)
        == s.model.kernels.size() + s.model.memcpys.size() + s.model.api_calls.size() + s.model.nvtx.size()
            + s.report.steps.steps.size() + s.report.bubbles.bubbles.size() + s.report.blocking_calls.size());
    const TimelineTrack& stream = s.index.tracks[track_named(s.index, "GPU 0 · stream 7")];
    CHECK(stream.kind == TrackKind::GpuStream);
    CHECK(stream.device_id == 0u);
    CHECK(stream.stream_id == 7u);
    CHECK(stream.items == 6); // the GEMM, add, the copy, three graph kernels
    CHECK(s.index.start_ns == 0);
    CHECK(s.index.end_ns == 10000);

    SECTION("a driver call inside a runtime call is one lane down")
    {
        const TimelineTrack& calls = s.index.tracks[track_named(s.index, "thread 1234 (python3)")];
        REQUIRE(calls.lanes.size() == 2);
        CHECK(calls.lanes[0].label == "depth 0");
        REQUIRE(calls.lanes[1].size() == 1);
        CHECK(calls.lanes[1].ref(0)
            == ItemRef { ItemKind::ApiCall, static_cast<uint32_t>(api_row(s.model, "cuLaunchKernel")) });
        CHECK(calls.lanes[0].category[0] == static_cast<uint8_t>(ApiCategory::Launch));
        CHECK(timeline_category_name(TrackKind::HostThread, calls.lanes[0].category[0]) == "launch");
    }
    SECTION("NVTX ranges are on the lane of their nesting depth, a mark included")
    {
        const TimelineTrack& nvtx = s.index.tracks[track_named(s.index, "NVTX · thread 1234 (python3)")];
        REQUIRE(nvtx.lanes.size() == 3);
        CHECK(nvtx.lanes[0].size() == 1); // train_step
        CHECK(nvtx.lanes[1].size() == 1); // forward
        CHECK(nvtx.lanes[2].size() == 3); // layer0, layer1, checkpoint
        CHECK(nvtx.lanes[2].category[2] == static_cast<uint8_t>(NvtxCategory::Mark));
        CHECK(nvtx.lanes[2].start_ns[2] == nvtx.lanes[2].end_ns[2]);
        CHECK(item_name(s.model, s.report, nvtx.lanes[2].ref(0)) == "layer0");
    }
    SECTION("the graph's kernels and the GEMM carry their categories")
    {
        CHECK(stream.lanes[0].category[0] == static_cast<uint8_t>(KernelClass::Fp8Gemm));
        CHECK(stream.lanes[0].category[2] == kCategoryMemcpy);
        CHECK(timeline_category_name(TrackKind::GpuStream, kCategoryMemcpy) == "memcpy");
        CHECK(timeline_category_name(TrackKind::GpuStream, 0) == "FP8 GEMM");
        CHECK(item_name(s.model, s.report, stream.lanes[0].ref(2)) == "memcpy HtoD");
    }
}

TEST_CASE("timeline flows: launch call to GPU work and back", "[timeline]")
{
    const Scene s = scene();
    const size_t gemm = kernel_row(s.model, 120);
    const size_t launch = api_row(s.model, "cudaLaunchKernel_v7000");
    CHECK(launching_call(s.index, s.model, { ItemKind::Kernel, static_cast<uint32_t>(gemm) }) == launch);
    CHECK(launched_work(s.index, s.model, launch)
        == std::vector<ItemRef> { { ItemKind::Kernel, static_cast<uint32_t>(gemm) } });

    const size_t graph = api_row(s.model, "cudaGraphLaunch_v10000");
    const std::vector<ItemRef> nodes = launched_work(s.index, s.model, graph);
    REQUIRE(nodes.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(nodes[i]
            == ItemRef {
                ItemKind::Kernel, static_cast<uint32_t>(kernel_row(s.model, 820 + 10 * static_cast<int64_t>(i))) });
        CHECK(launching_call(s.index, s.model, nodes[i]) == graph);
    }
    const ItemRef copy { ItemKind::Memcpy, 0 };
    CHECK(launching_call(s.index, s.model, copy) == api_row(s.model, "cudaMemcpyAsync_v3020"));
    CHECK(launched_work(s.index, s.model, api_row(s.model, "cudaMemcpyAsync_v3020")) == std::vector<ItemRef> { copy });

    CHECK_FALSE(
        launching_call(s.index, s.model, { ItemKind::Kernel, static_cast<uint32_t>(kernel_row(s.model, 900)) }));
    CHECK_FALSE(launching_call(s.index, s.model, { ItemKind::ApiCall, 0 }));
    CHECK_FALSE(launching_call(s.index, s.model, { ItemKind::Kernel, 999 }));
    CHECK(launched_work(s.index, s.model, api_row(s.model, "cudaStreamSynchronize_v3020")).empty());
    CHECK(launched_work(s.index, s.model, 999).empty());
}

TEST_CASE("timeline syncs: the marker, the bubble it caused, and their details", "[timeline]")
{
    const Scene s = scene();
    REQUIRE(s.report.blocking_calls.size() == 1);
    const std::span<const uint32_t> caused = sync_bubbles(s.index, 0);
    REQUIRE(caused.size() == 1);
    const Bubble& bubble = s.report.bubbles.bubbles.at(caused[0]);
    CHECK(bubble.cause == BubbleCause::Sync);
    CHECK(bubble.start_ns == 300);
    CHECK(bubble.end_ns == 630);
    CHECK(sync_bubbles(s.index, 1).empty());

    const TimelineTrack& syncs = s.index.tracks[track_named(s.index, "syncs · thread 1234 (python3)")];
    CHECK(syncs.lanes[0].ref(0) == ItemRef { ItemKind::Sync, 0 });
    CHECK(syncs.lanes[0].category[0] == static_cast<uint8_t>(HostBlockingKind::StreamSync));
    const ItemDetails sync = describe_item(s.index, s.model, s.report, { ItemKind::Sync, 0 });
    CHECK(sync.title == "cudaStreamSynchronize");
    CHECK(field(sync, "kind").text == "stream sync");
    CHECK(field(sync, "GPU idle caused").value == 330);
    CHECK(field(sync, "bubbles caused").value == 1);

    const ItemDetails b = describe_item(s.index, s.model, s.report, { ItemKind::Bubble, caused[0] });
    CHECK(b.title == "sync");
    CHECK(field(b, "duration").unit == DetailField::Unit::Duration);
    CHECK(field(b, "duration").value == 330);
    CHECK(field(b, "sync call").text == "cudaStreamSynchronize");
    const auto marked = locate(s.index, s.model, s.report, { ItemKind::Bubble, caused[0] });
    REQUIRE(marked);
    CHECK(s.index.tracks[marked->lane.track].name == "GPU 0 · bubbles");
    CHECK(timeline_category_name(TrackKind::Bubbles, s.index.lane(marked->lane).category[marked->index]) == "sync");
}

TEST_CASE("timeline details and locate", "[timeline]")
{
    const Scene s = scene();
    const ItemRef gemm { ItemKind::Kernel, static_cast<uint32_t>(kernel_row(s.model, 120)) };
    const ItemDetails d = describe_item(s.index, s.model, s.report, gemm);
    CHECK(d.title == "sm90_xmma_gemm_e4m3e4m3_f32");
    CHECK(field(d, "start").value == 120);
    CHECK(field(d, "duration").value == 180);
    CHECK(field(d, "class").text == "FP8 GEMM");
    CHECK(field(d, "launched by").text == "cudaLaunchKernel");
    CHECK(field(d, "launch delay").value == 10);
    CHECK(field(d, "thread").value == 1234);
    CHECK(field(d, "step").value == s.report.steps.steps.at(0).index);

    const auto where = locate(s.index, s.model, s.report, gemm);
    REQUIRE(where);
    CHECK(where->lane == LaneRef { track_named(s.index, "GPU 0 · stream 7"), 0 });
    CHECK(s.index.lane(where->lane).ref(where->index) == gemm);
    const ItemRef driver { ItemKind::ApiCall, static_cast<uint32_t>(api_row(s.model, "cuLaunchKernel")) };
    const auto driver_at = locate(s.index, s.model, s.report, driver);
    REQUIRE(driver_at);
    CHECK(driver_at->lane.lane == 1);
    CHECK(locate(s.index, s.model, s.report, { ItemKind::Step, 0 })->lane.track == 0);
    CHECK_FALSE(locate(s.index, s.model, s.report, { ItemKind::Kernel, 999 }));
    CHECK(describe_item(s.index, s.model, s.report, { ItemKind::Nvtx, 999 }).title.empty());
    CHECK(describe_item(s.index, s.model, s.report, { ItemKind::Step, 0 }).title == "step 0");
}

TEST_CASE("timeline on the recorded traces: every item once, locatable, flows that agree", "[timeline][real]")
{
    for (const char* file : { "h100-train-fp8.sqlite", "h100-sample-syncs.sqlite", "h200-sample-host-stall.sqlite" }) {
        INFO(file);
        const TraceModel model = load_recorded(file);
        const Report report = analyze(model);
        const TimelineIndex index = build_timeline(model, report);
        CHECK(check_layout(index)
            == model.kernels.size() + model.memcpys.size() + model.memsets.size() + model.api_calls.size()
                + model.nvtx.size() + report.steps.steps.size() + report.bubbles.bubbles.size()
                + report.blocking_calls.size());
        for (size_t k = 0; k < model.kernels.size(); k += 7) {
            const ItemRef kernel { ItemKind::Kernel, static_cast<uint32_t>(k) };
            const auto where = locate(index, model, report, kernel);
            REQUIRE(where);
            REQUIRE(index.lane(where->lane).ref(where->index) == kernel);
            if (const auto call = launching_call(index, model, kernel)) {
                const std::vector<ItemRef> work = launched_work(index, model, *call);
                REQUIRE(std::ranges::find(work, kernel) != work.end());
            }
        }
        // A query over the whole trace accounts for every item of each lane.
        for (uint32_t t = 0; t < index.tracks.size(); ++t)
            for (uint32_t l = 0; l < index.tracks[t].lanes.size(); ++l) {
                size_t counted = 0;
                for (const TimelineEntry& e : query(index, { t, l }, index.start_ns, index.end_ns + 1, 1000))
                    counted += e.count;
                CHECK(counted == index.tracks[t].lanes[l].size());
            }
    }
}

TEST_CASE("timeline: an empty trace, a default index and unknown lanes answer nothing", "[timeline]")
{
    const TraceModel empty;
    const Report report = analyze(empty);
    const TimelineIndex index = build_timeline(empty, report);
    CHECK(index.tracks.empty());
    CHECK(index.start_ns == 0);
    CHECK(index.end_ns == 0);
    CHECK(query(index, { 0, 0 }, 0, 1000, 100).empty());

    const TimelineIndex none;
    const ItemRef kernel { ItemKind::Kernel, 0 };
    CHECK_FALSE(launching_call(none, empty, kernel));
    CHECK(launched_work(none, empty, 0).empty());
    CHECK(sync_bubbles(none, 0).empty());
    CHECK_FALSE(locate(none, empty, report, kernel));

    const Scene s = scene();
    CHECK(query(s.index, { 0, 5 }, 0, 1000, 100).empty()); // the steps track has one lane
    CHECK(query(s.index, { 99, 0 }, 0, 1000, 100).empty());
}
