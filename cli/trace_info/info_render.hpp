// Renderers for `fp8scope info`: the loaded TraceModel as aligned text or as the versioned JSON object that
// docs/cli.md documents. They only format; every figure comes from the model.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

// Bumped when a field of the JSON object changes meaning or disappears; adding a field keeps the version.
inline constexpr int kInfoJsonVersion = 1;

struct TextStyle {
    bool bold_headings = false; // only when stdout is a terminal
};

std::string render_info_text(const analyzer::TraceModel& model, TextStyle style);
nlohmann::ordered_json render_info_json(const analyzer::TraceModel& model);

} // namespace fp8scope::cli
