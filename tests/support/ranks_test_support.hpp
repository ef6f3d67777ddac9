// The multi-rank tests' helpers (ranks_test.cpp, ranks_sets_test.cpp): reports without warm-up, one rank's summary
// of a scenario trace, and a rank's step by index.
#pragma once

#include "analysis_test_support.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "rank_scenario.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace fp8scope::testing {

using analyzer::RankStep;
using analyzer::RankSummary;
using analyzer::ReportOptions;

constexpr int64_t kUtc = kRankScenarioUtc;

inline ReportOptions no_warmup()
{
    ReportOptions options;
    options.steps.warmup = 0;
    return options;
}

inline RankSummary summarize(const RankTrace& trace, const std::string& name)
{
    const analyzer::TraceModel model = write_and_load(trace.s, name);
    return analyzer::summarize_rank(model, analyzer::analyze(model, no_warmup()));
}

inline const RankStep& step_of(const RankSummary& rank, int64_t index)
{
    for (const RankStep& step : rank.steps)
        if (step.index == index)
            return step;
    FAIL("no step " << index);
    throw 0;
}

} // namespace fp8scope::testing
