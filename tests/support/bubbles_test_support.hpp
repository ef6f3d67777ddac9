// The bubble tests' helpers (bubbles_test.cpp, bubbles_comm_test.cpp): steps from intervals, the analysis as the
// report runs it, the expected bubbles, and kernels and launch calls with defaults.
#pragma once

#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "scenario.hpp"

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>
#include <utility>

namespace fp8scope::testing {

using analyzer::BubbleAnalysis;
using analyzer::BubbleCause;
using analyzer::BubbleTotals;
using analyzer::StepSet;
using analyzer::StepSource;
using analyzer::TraceModel;

inline StepSet steps_of(std::initializer_list<std::pair<int64_t, int64_t>> intervals)
{
    StepSet set;
    set.source = StepSource::Markers;
    int64_t index = 0;
    for (auto [start_ns, end_ns] : intervals)
        set.steps.push_back({ index++, start_ns, end_ns });
    return set;
}

inline BubbleAnalysis analyze(const TraceModel& model, const StepSet& steps)
{
    return analyze_bubbles(model, steps, find_host_blocking_calls(model));
}

inline int64_t cause_ns(const BubbleTotals& totals, BubbleCause cause)
{
    return totals.cause_ns[size_t(cause)];
}

struct Expected {
    int64_t start_ns, end_ns;
    BubbleCause cause;
};

inline void check_bubbles(const BubbleAnalysis& analysis, std::initializer_list<Expected> expected)
{
    REQUIRE(analysis.bubbles.size() == expected.size());
    size_t i = 0;
    for (const Expected& e : expected) {
        INFO("bubble " << i);
        CHECK(analysis.bubbles[i].start_ns == e.start_ns);
        CHECK(analysis.bubbles[i].end_ns == e.end_ns);
        CHECK(bubble_cause_name(analysis.bubbles[i].cause) == std::string(bubble_cause_name(e.cause)));
        ++i;
    }
}

inline KernelSpec kernel(int64_t start_ns, int64_t end_ns, uint32_t stream = 7, uint32_t device = 0)
{
    return { .start_ns = start_ns, .end_ns = end_ns, .name = "kernel", .device_id = device, .stream_id = stream };
}

inline ApiSpec call(int64_t start_ns, int64_t end_ns, std::string name = "cudaLaunchKernel_v7000")
{
    return { .api_start_ns = start_ns, .api_end_ns = end_ns, .name = std::move(name) };
}

// Rule 1: a stream sync on the launching thread ends inside the gap [200, 300).
inline Scenario sync_scenario()
{
    Scenario s;
    const auto host = s.thread(4242, 4242);
    s.launch(host, call(10, 20), kernel(100, 200));
    s.sync(host, 25, 205, schema::SyncType::StreamSynchronize, 7);
    s.launch(host, call(210, 220), kernel(300, 400));
    return s;
}

} // namespace fp8scope::testing
