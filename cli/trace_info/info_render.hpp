// Renderers for `fp8scope info`: the trace's summary as aligned text or as the versioned JSON object that
// docs/cli.md documents. They only format; every figure comes from the summary.
#pragma once

#include "fp8scope/analyzer/load/trace_summary.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

// Bumped when a field of the JSON object changes meaning or disappears; adding a field keeps the version.
inline constexpr int kInfoJsonVersion = 1;

struct TextStyle {
    bool bold_headings = false; // only when stdout is a terminal
};

std::string render_info_text(const analyzer::TraceSummary& model, TextStyle style);
nlohmann::ordered_json render_info_json(const analyzer::TraceSummary& model);

} // namespace fp8scope::cli
