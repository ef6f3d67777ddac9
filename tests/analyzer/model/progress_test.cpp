// Progress and cancel for the viewer's background work (progress.hpp): loading, analysing and building the timeline
// report non-decreasing fractions ending at 1, and a hook that returns false stops each with ErrorCode::Cancelled.
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

// 20,000 launches (40,000 kernel and API rows): several progress reports while reading.
const std::string& large_trace()
{
    static const std::string path = [] {
        Scenario s;
        const HostThread host = s.thread(4242, 4242, "main");
        for (int64_t i = 0; i < 20000; ++i)
            s.launch(host, { .api_start_ns = 1000 * i, .api_end_ns = 1000 * i + 100 },
                { .start_ns = 1000 * i + 200, .end_ns = 1000 * i + 700 });
        const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "progress";
        std::filesystem::create_directories(dir);
        // One file per process: CTest runs the test cases in parallel, each building this trace.
        const std::string file = (dir / ("large-" + std::to_string(::getpid()) + ".sqlite")).string();
        std::filesystem::remove(file);
        REQUIRE(s.write_fp8scope(file).has_value());
        return file;
    }();
    return path;
}

struct Recorder {
    std::vector<double> fractions;
    double cancel_above = 2; // return false once a fraction exceeds this
    ProgressHook hook()
    {
        return [this](double f) {
            fractions.push_back(f);
            return f <= cancel_above;
        };
    }
    void check_complete() const
    {
        REQUIRE_FALSE(fractions.empty());
        CHECK(std::ranges::is_sorted(fractions));
        CHECK(fractions.front() >= 0.0);
        CHECK(fractions.back() == 1.0);
        CHECK(std::ranges::count(fractions, 1.0) == 1);
    }
};

} // namespace

TEST_CASE("progress: loading reports rising fractions to 1 and loads the same model", "[progress]")
{
    Recorder recorder;
    const auto model = load_trace(large_trace(), recorder.hook());
    REQUIRE(model.has_value());
    recorder.check_complete();
    CHECK(recorder.fractions.size() >= 5); // rows are counted every 4,096
    CHECK(model->kernels.size() == 20000);
    CHECK(model->api_calls.size() == 20000);
    const auto plain = load_trace(large_trace(), ProgressHook {}); // an empty hook is the plain load
    REQUIRE(plain.has_value());
    CHECK(plain->kernels.start_ns == model->kernels.start_ns);
}

TEST_CASE("progress: cancelling a load returns Cancelled, never a model", "[progress]")
{
    SECTION("at the first report")
    {
        Recorder recorder;
        recorder.cancel_above = -1;
        const auto model = load_trace(large_trace(), recorder.hook());
        REQUIRE_FALSE(model.has_value());
        CHECK(model.error().code == ErrorCode::Cancelled);
        CHECK(model.error().message == "loading trace '" + large_trace() + "' cancelled");
        CHECK(recorder.fractions.size() == 1);
    }
    SECTION("while the tables are read")
    {
        Recorder recorder;
        recorder.cancel_above = 0.2;
        const auto model = load_trace(large_trace(), recorder.hook());
        REQUIRE_FALSE(model.has_value());
        CHECK(model.error().code == ErrorCode::Cancelled);
        CHECK(recorder.fractions.back() < 0.9); // stopped in the reading, before the end of it
    }
    SECTION("on a small recorded trace (one report per table end)")
    {
        Recorder recorder;
        recorder.cancel_above = 0.5;
        const auto model
            = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/h100-sample-syncs.sqlite", recorder.hook());
        REQUIRE_FALSE(model.has_value());
        CHECK(model.error().code == ErrorCode::Cancelled);
    }
}

TEST_CASE("progress: analysing and building the timeline report progress and cancel", "[progress]")
{
    const TraceModel model = load_recorded("h100-train-fp8.sqlite");
    Recorder analysing;
    const auto report = analyze(model, {}, analysing.hook());
    REQUIRE(report.has_value());
    analysing.check_complete();
    CHECK(analysing.fractions.size() >= 6);
    CHECK(report->bubbles.total.idle_ns == analyze(model).bubbles.total.idle_ns);

    Recorder building;
    const auto index = build_timeline(model, *report, building.hook());
    REQUIRE(index.has_value());
    building.check_complete();
    CHECK(index->tracks.size() == build_timeline(model, *report).tracks.size());

    Recorder cancel_analysis;
    cancel_analysis.cancel_above = 0.3;
    const auto cancelled = analyze(model, {}, cancel_analysis.hook());
    REQUIRE_FALSE(cancelled.has_value());
    CHECK(cancelled.error().code == ErrorCode::Cancelled);
    CHECK(cancelled.error().message == "analysis cancelled");

    Recorder cancel_timeline;
    cancel_timeline.cancel_above = -1;
    const auto no_index = build_timeline(model, *report, cancel_timeline.hook());
    REQUIRE_FALSE(no_index.has_value());
    CHECK(no_index.error().code == ErrorCode::Cancelled);
    CHECK(no_index.error().message == "timeline cancelled");
}
