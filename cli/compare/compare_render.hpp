// `fp8scope compare` output: the analyzer's CompareResult as text (terminals), JSON (schema fp8scope.compare/1,
// docs/cli.md), Markdown (CI job summaries), one self-contained HTML page (CI artifacts) or JUnit XML (CI test
// reports). Formatting only: every figure, drift verdict and threshold comes from the analyzer (compare.hpp).
#pragma once

#include "report/report_render.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

inline constexpr const char* kCompareJsonSchema = "fp8scope.compare/1";

// The two traces and their analyses (input) and the comparison made of them (result).
std::string render_compare_text(
    const analyzer::CompareInput& input, const analyzer::CompareResult& result, ReportTextStyle style = {});
nlohmann::ordered_json render_compare_json(const analyzer::CompareInput& input, const analyzer::CompareResult& result);
std::string render_compare_markdown(const analyzer::CompareInput& input, const analyzer::CompareResult& result);
// One HTML file with no external resource (inline CSS and SVG, no script), also well-formed XML.
std::string render_compare_html(const analyzer::CompareInput& input, const analyzer::CompareResult& result);
// One testsuite "fp8scope.compare" with the testcases drift and loss_delta (layout in docs/cli.md). `compare`
// exits 0 either way: `check --ref` is the gate.
std::string render_compare_junit(const analyzer::CompareInput& input, const analyzer::CompareResult& result);
// `compare --fp8-whatif` (compare_fp8_whatif.cpp): the reference's FP8 what-if, then, for an FP8 run, the run's step
// against the eager prediction for its scaling recipe; the JSON object "fp8_whatif" (report's, plus run_step_ns and
// run_against).
std::string render_compare_fp8_whatif_text(const analyzer::CompareInput& input, const analyzer::CompareResult& result,
    const analyzer::Fp8WhatIf& whatif, bool color);
nlohmann::ordered_json compare_fp8_whatif_json(
    const analyzer::CompareInput& input, const analyzer::CompareResult& result, const analyzer::Fp8WhatIf& whatif);

} // namespace fp8scope::cli
