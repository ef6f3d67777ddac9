// Capture windows on real H100 recordings (samples/traces/capture/, recorded by tests/gpu/check_capture.py): the
// analysed steps are exactly those the windows held, as the workloads printed them (each trace's .truth.json), and
// every kernel lies in a window. Both traces are schema 1.2: they also load through the row-count check.
#include "fp8scope/analyzer/steps.hpp"

#include "analysis_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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

TEST_CASE("real capture windows: exactly the steps inside them are analysed, every kernel in a window", "[capture][real]")
{
    for (const std::string name : { "h100-steps-20-29", "h100-profiler-range" }) {
        INFO(name);
        const nlohmann::json truth = truth_of(name);
        const analyzer::TraceModel model = load_recorded("capture/" + name + ".sqlite");
        REQUIRE(model.capture.windowed);
        REQUIRE(model.capture.windows.size() == 1);
        CHECK(model.row_counts.at("FP8SCOPE_CAPTURE_WINDOW") == 1);

        const analyzer::StepSet steps = analyzer::find_steps(model);
        std::vector<int64_t> analysed;
        for (const analyzer::StepInterval& s : steps.steps)
            analysed.push_back(s.index);
        CHECK(analysed == truth.at("expected_steps").get<std::vector<int64_t>>());
        CHECK(steps.window_edge_excluded == static_cast<int64_t>(truth.at("cut_by_edges").size()));

        const analyzer::CaptureWindow& window = model.capture.windows.front();
        REQUIRE(model.kernels.size() > 0);
        for (size_t k = 0; k < model.kernels.size(); ++k)
            REQUIRE(model.kernels.start_ns[k] >= window.start_ns);
    }
}
