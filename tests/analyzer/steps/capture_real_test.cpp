// Capture windows on real H100 recordings (samples/traces/capture/, recorded by tests/gpu/check_capture.py): the
// analysed steps are exactly those the windows held, as the workloads printed them (each trace's .truth.json), and
// every kernel was launched inside a window. The periodic trace was recorded with CUPTI detached between its
// windows (schema 1.3); all load through the row-count check.
#include "fp8scope/analyzer/steps/steps.hpp"

#include "analysis_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::testing;

namespace {

nlohmann::json truth_of(const std::string& name)
{
    std::ifstream in(std::string(FP8SCOPE_SAMPLE_TRACES) + "/capture/" + name + ".truth.json");
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

} // namespace

TEST_CASE(
    "real capture windows: exactly the steps inside them are analysed, every kernel in a window", "[capture][real]")
{
    for (const std::string name :
        { "h100-steps-20-29", "h100-profiler-range", "h200-profiler-range", "h100-periodic-every-20" }) {
        INFO(name);
        const nlohmann::json truth = truth_of(name);
        const analyzer::TraceModel model = load_recorded("capture/" + name + ".sqlite");
        REQUIRE(model.capture.windowed);
        const auto windows = truth.value("windows", int64_t { 1 });
        REQUIRE(static_cast<int64_t>(model.capture.windows.size()) == windows);
        CHECK(model.row_counts.at("FP8SCOPE_CAPTURE_WINDOW") == windows);

        const analyzer::StepSet steps = analyzer::find_steps(model);
        std::vector<int64_t> analysed;
        for (const analyzer::StepInterval& s : steps.steps)
            analysed.push_back(s.index);
        CHECK(analysed == truth.at("expected_steps").get<std::vector<int64_t>>());
        CHECK(steps.window_edge_excluded == static_cast<int64_t>(truth.at("cut_by_edges").size()));

        // A kernel starts after the window that launched it opened, and before the next one opens: none was
        // launched between windows (its kernels may end, even start, after its window's end).
        REQUIRE(model.kernels.size() > 0);
        const auto& w = model.capture.windows;
        for (size_t k = 0; k < model.kernels.size(); ++k) {
            const int64_t start = model.kernels.start_ns[k];
            const auto after = std::upper_bound(w.begin(), w.end(), start,
                [](int64_t t, const analyzer::CaptureWindow& window) { return t < window.start_ns; });
            REQUIRE(after != w.begin()); // not before the first window
            REQUIRE(start - std::prev(after)->end_ns < 300'000'000); // within its grace, never deep in a gap
        }
    }
}
