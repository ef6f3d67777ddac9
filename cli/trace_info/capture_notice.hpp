// Why a windowed recording captured nothing, judged from the trace alone (docs/collector.md "Capture windows"), as
// `record`'s summary and `info` print it. A trace recorded by steps (capture mode "steps" or "periodic") in which no
// window ever opened: its job marked no step at all (no fp8scope.step(), no NVTX step range), or its steps all missed
// the windows. Traces of collectors that did not count NVTX step ranges (no meta nvtx_step_ranges) get the first answer
// when they hold no step marker.
#pragma once

#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <optional>
#include <string>

namespace fp8scope::cli {

// The sentence (capture_never_opened_text, shared with the collector's exit warning), or nullopt when a window
// opened or the trace was not recorded by steps.
std::optional<std::string> capture_never_opened(const analyzer::TraceSummary& summary);
std::optional<std::string> capture_never_opened(const analyzer::TraceModel& model);

} // namespace fp8scope::cli
