// Shared by the kernel-class, sync and launch-statistics tests: a scenario written through the real writer and
// loaded back, the recorded sample traces, and hand-made step sets (so these tests never depend on the step
// finder).
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "scenario.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace fp8scope::testing {

// Writes `scenario` as an fp8scope trace under FP8SCOPE_TEST_TMP/analysis/<test_name>.sqlite and loads it;
// REQUIREs both to succeed.
analyzer::TraceModel load_scenario(const Scenario& scenario, const std::string& test_name);
// Loads samples/traces/<file>; REQUIREs success.
analyzer::TraceModel load_sample(const std::string& file);
// Steps with indices 0, 1, ... over the given [start, end) intervals.
analyzer::StepSet make_steps(std::initializer_list<std::pair<int64_t, int64_t>> intervals);
// The NVTX ranges named `train_step` of a sample trace as steps (no warm-up removed), in time order.
analyzer::StepSet nvtx_steps(const analyzer::TraceModel& model, std::string_view range_name);

} // namespace fp8scope::testing
