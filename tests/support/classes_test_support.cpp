#include "classes_test_support.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

namespace fp8scope::testing {

analyzer::TraceModel load_scenario(const Scenario& scenario, const std::string& test_name)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "analysis";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / (test_name + ".sqlite")).string();
    std::filesystem::remove(path);
    const auto written = scenario.write_fp8scope(path);
    REQUIRE(written);
    auto model = analyzer::load_trace(path);
    if (!model)
        FAIL(model.error().message);
    return std::move(*model);
}

analyzer::TraceModel load_sample(const std::string& file)
{
    const std::string path = std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + file;
    auto model = analyzer::load_trace(path);
    if (!model)
        FAIL(model.error().message);
    return std::move(*model);
}

analyzer::StepSet make_steps(std::initializer_list<std::pair<int64_t, int64_t>> intervals)
{
    analyzer::StepSet set;
    set.source = analyzer::StepSource::Markers;
    int64_t index = 0;
    for (const auto& [start_ns, end_ns] : intervals)
        set.steps.push_back({ .index = index++, .start_ns = start_ns, .end_ns = end_ns });
    return set;
}

analyzer::StepSet nvtx_steps(const analyzer::TraceModel& model, std::string_view range_name)
{
    analyzer::StepSet set;
    set.source = analyzer::StepSource::Nvtx;
    set.detail = std::string(range_name);
    for (size_t i = 0; i < model.nvtx.size(); ++i) {
        if (model.strings[model.nvtx.text[i]] == range_name && model.nvtx.end_ns[i] != analyzer::NvtxTable::kNoEnd)
            set.steps.push_back({ .index = static_cast<int64_t>(set.steps.size()),
                .start_ns = model.nvtx.start_ns[i],
                .end_ns = model.nvtx.end_ns[i] });
    }
    std::sort(set.steps.begin(), set.steps.end(),
        [](const analyzer::StepInterval& a, const analyzer::StepInterval& b) { return a.start_ns < b.start_ns; });
    return set;
}

} // namespace fp8scope::testing
