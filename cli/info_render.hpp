// Renderers for `fp8scope info`: the loaded TraceModel as aligned text or as the versioned JSON object that
// docs/cli.md documents. They only format; every figure comes from the model.
#pragma once

#include "fp8scope/analyzer/trace_model.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

// Bumped when a field of the JSON object changes meaning or disappears; adding a field keeps the version.
inline constexpr int kInfoJsonVersion = 1;

// The sentence `info` prints for a trace whose recording process never closed it.
inline constexpr std::string_view kUnfinishedText = "unfinished: the recording process did not close the trace "
                                                    "(crash or SIGKILL); data up to the last commit is present";

// "finished", "finished (exit)" (the reason made printable) or kUnfinishedText: how `info` and every report name a
// trace's state.
std::string finish_status_text(bool finished, std::string_view finish_reason);

struct TextStyle {
    bool bold_headings = false; // only when stdout is a terminal
};

std::string render_info_text(const analyzer::TraceModel& model, TextStyle style);
nlohmann::ordered_json render_info_json(const analyzer::TraceModel& model);

} // namespace fp8scope::cli
