// `fp8scope check` output: the budget verdicts as a text table (stdout), JUnit XML (one testcase per budget, for
// CI test reports) and Markdown (for CI job summaries).
#pragma once

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/tensors/nan_scalars.hpp"

#include <string>
#include <vector>

namespace fp8scope::cli {

// What was checked: the trace as given on the command line, how complete its recording is (an unfinished trace or
// dropped records are said in every format, as in `report`), and the reference it was compared with, if any.
struct CheckSubject {
    std::string trace;
    analyzer::RecordingStatus recording;
    std::string reference; // --ref, empty without
    std::vector<analyzer::NanScalar> nan_scalars; // scalars that went NaN: a warning, as in `report`
    // Further warnings: with several ranks, each rank's recording warnings, "rank R ('path'): warning" (recording
    // stays empty then); with --ref, that the FP8 run was given as the reference and is gated as the run.
    std::vector<std::string> warnings;
};

// Each rank's recording warnings (recording_warnings()), prefixed with the rank and its trace.
std::vector<std::string> rank_recording_warnings(const std::vector<analyzer::RankSummary>& ranks);

std::string render_check_text(const CheckSubject& subject, const std::vector<analyzer::BudgetResult>& results);
std::string render_check_junit(const CheckSubject& subject, const std::vector<analyzer::BudgetResult>& results);
std::string render_check_markdown(const CheckSubject& subject, const std::vector<analyzer::BudgetResult>& results);

} // namespace fp8scope::cli
