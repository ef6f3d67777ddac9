// Step finding (docs/analysis.md "Steps"): one synthetic scenario per source with exact step intervals, the
// warm-up rule, and the recorded samples with their NVTX ranges ignored (automatic detection).
#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/steps.hpp"

#include <catch2/catch.hpp>

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

        // With NVTX allowed, the recorded train_step ranges are the steps, warm-up removed.
        const StepSet nvtx = find_steps(model, {});
        CHECK(nvtx.source == StepSource::Nvtx);
        CHECK(int64_t(nvtx.steps.size()) == expected - 2);
        CHECK(nvtx.warmup_excluded == 2);
    }
}
