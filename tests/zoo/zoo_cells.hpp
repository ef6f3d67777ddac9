// What the zoo judge's cells share (zoo_judge.cpp, zoo_judge_pair.cpp): a workload's loaded trace with its truth, and
// the helpers each cell is judged with.
#pragma once

#include "zoo_judge.hpp"

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fp8scope::zoo::detail {

struct Trace {
    std::string file; // <name>.sqlite without the folder
    nlohmann::json truth;
    analyzer::TraceModel model;
};

// <dir>/<stem>.sqlite with its <stem>.truth.json; throws std::runtime_error with the reason when either is unreadable.
Trace load(const std::string& dir, const std::string& stem);

Cell cell(bool right, std::string text);
Cell not_judged(std::string text);

// j[key] when it is a number.
std::optional<double> number(const nlohmann::json& j, const char* key);

// |value - expected| within `tolerance` of |expected|.
bool within(double value, double expected, double tolerance);

struct PairCells {
    Cell drift, recipe;
};

// The drift verdict and recipe cells of a run recorded with its BF16 reference (zoo_judge_pair.cpp).
PairCells judge_pair(const std::string& dir, const Trace& run);

// The FP8 price cell (zoo_judge_pair.cpp).
Cell judge_price(const Trace& run);

// The fused bookkeeping cell (zoo_judge_pair.cpp): a compiled job whose truth lists what each Inductor kernel does
// (inductor_kernels, read from the generated source) against the classes the kernel names get.
Cell judge_fused_bookkeeping(const Trace& run);

// The compiled what-if cell (zoo_judge_pair.cpp): an eager BF16 trace whose truth holds untraced compiled timings
// (zoo-fusion, and the Llama fit) against the FP8 what-if's compiled BF16 step and tensorwise prediction, within
// 20%, and rowwise's direction against BF16.
Cell judge_compiled_whatif(const Trace& eager, const analyzer::Report& report);

// The numerics verdict of an FP8 run judged alone (zoo_judge_pair.cpp): its truth's "numerics" (healthy,
// at_risk_or_broken, broken; reference for a BF16 twin), else a clean or planted drift of an FP8 run.
Cell judge_numerics_verdict(const Trace& run, const analyzer::Report& report);

} // namespace fp8scope::zoo::detail
