// What a recorded job's own step markers say about its steps, for tests that judge automatic detection on real jobs
// (tests/analyzer/report/real_jobs_test.cpp, the zoo in tests/zoo/): the device's activities in start order with the
// start of the API call that launched each, and the true step boundaries as positions in that order.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp8scope::testing {

struct JobActivities {
    std::vector<int64_t> start_ns, launch_ns; // launch_ns: the launch call's start (the runtime call over the driver's)
};

JobActivities job_activities(const analyzer::TraceModel& model);

// For each true step start (a marker's or an NVTX step range's host time), the first activity whose launch call began
// at or after it: the GPU runs behind the host, so the host time alone says nothing about the GPU's order.
std::vector<size_t> true_boundaries(const JobActivities& a, const std::vector<int64_t>& step_starts_ns);

// The position of the first activity that starts at or after `start_ns`.
size_t position_of(const JobActivities& a, int64_t start_ns);

} // namespace fp8scope::testing
