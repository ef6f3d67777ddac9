// What a windowed recording captured, as `report` and `info` print it (docs/cli.md): one text line and one JSON
// object, shared so that the two commands say it the same way.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

// "whole run" or e.g. "steps (--capture-steps 20:29): 1 window: 1.20 s to 2.31 s (steps 20 to 29)".
std::string capture_sentence(const analyzer::CaptureInfo& capture);

// {"mode", "options", "windows": [{"id", "start_ns", "end_ns", "open_at_end", "first_step", "last_step",
// "trigger"}]}; windows is null for a whole-run capture.
nlohmann::ordered_json capture_json(const analyzer::CaptureInfo& capture);

} // namespace fp8scope::cli
