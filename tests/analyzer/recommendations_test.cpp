// What-if estimates and recommendations on the real H100 traces: the figures they quote come from the report.
#include "fp8scope/analyzer/recommendations.hpp"
#include "fp8scope/analyzer/trace_loader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope::analyzer;

namespace {

Report report_of(const char* name)
{
    auto model = load_trace(std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + name);
    REQUIRE(model);
    return analyze(*model);
}

const Recommendation* find(const WhatIf& w, RecommendationKind kind)
{
    auto it = std::ranges::find_if(w.recommendations, [&](const Recommendation& r) { return r.kind == kind; });
    return it == w.recommendations.end() ? nullptr : &*it;
}

} // namespace

TEST_CASE("the host-bound FP8 sample: reduce host work first, CUDA Graphs and FP8 bookkeeping fusion after",
    "[recommendations][sample]")
{
    const Report report = report_of("h100-train-fp8.sqlite");
    const WhatIf w = estimate_what_if(report);
    REQUIRE(!w.recommendations.empty());
    CHECK(w.recommendations.front().kind == RecommendationKind::ReduceHostWork);
    const auto steps = static_cast<int64_t>(report.steps.steps.size());
    CHECK(w.mean_step_ns == report.totals.step_ns / steps);
    // The CUDA Graphs estimate removes exactly the launch-caused idle time.
    CHECK(w.mean_step_ns - w.without_launch_overhead_ns
        == report.totals.cause_ns[static_cast<size_t>(BubbleCause::Launch)] / steps);
    const Recommendation* fuse = find(w, RecommendationKind::FuseFp8Bookkeeping);
    REQUIRE(fuse != nullptr);
    CHECK(fuse->saving_per_step_ns
        == (report.kernel_classes.of(KernelClass::AmaxScale).time_ns + report.kernel_classes.of(KernelClass::Cast).time_ns)
            / steps);
    for (size_t i = 1; i < w.recommendations.size(); ++i)
        CHECK(w.recommendations[i - 1].saving_per_step_ns >= w.recommendations[i].saving_per_step_ns);
}

TEST_CASE("the BF16 sample gets no FP8 recommendation, the syncs sample gets the sync one", "[recommendations][sample]")
{
    CHECK(find(estimate_what_if(report_of("h100-train-bf16.sqlite")), RecommendationKind::FuseFp8Bookkeeping)
        == nullptr);
    const WhatIf syncs = estimate_what_if(report_of("h100-sample-syncs.sqlite"));
    CHECK(find(syncs, RecommendationKind::RemoveSync) != nullptr);
    CHECK(find(syncs, RecommendationKind::FuseFp8Bookkeeping) == nullptr);
}
