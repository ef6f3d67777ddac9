// What the viewer shows: one trace loaded and analysed, optionally with a reference run compared against it. Built
// in the background by SessionLoader, then shared read-only (std::shared_ptr<const ...>) by every model and view, so
// that a view never sees a half-built session and a stale one lives until its last reader lets go.
#pragma once

#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/kernels/kernel_table.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/views/tensor_series.hpp"
#include "fp8scope/analyzer/views/timeline.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace fp8scope::gui {

// One trace as the analyzer sees it: the model, the report, the what-if estimates with their recommendations, the
// FP8 what-if, and the tables the views show (computed once here, so that a view opens and sorts without touching
// the model).
struct AnalysedTrace {
    analyzer::TraceModel model;
    analyzer::Report report;
    analyzer::WhatIf what_if;
    // What FP8 would make of a BF16 run, with the shipped H100 GEMM table (`report --fp8-whatif` without
    // --gemm-table); its not_applicable says why not for any other run (FP8 already, no GEMMs).
    analyzer::Fp8WhatIf fp8_whatif;
    analyzer::KernelTableResult kernels;
    std::vector<analyzer::TensorSiteSeries> tensor_series; // by site id

    // Analyses a loaded trace, reporting progress to `progress`. An error when the trace has nothing to show (no
    // steps: ErrorCode::InvalidTrace naming the file) or when `progress` cancelled (ErrorCode::Cancelled).
    static Expected<AnalysedTrace> analyse(analyzer::TraceModel model, const analyzer::ProgressHook& progress);

    // The series of a site, null when the site has no samples in the analysed steps.
    const analyzer::TensorSiteSeries* series_of(int64_t site_id) const;
};

struct Session {
    std::shared_ptr<const AnalysedTrace> run;
    std::shared_ptr<const AnalysedTrace> ref; // null without a reference
    std::optional<analyzer::CompareResult> compare; // set when ref is, and the analyzer compared them

    // The analysis options both traces are analysed with (the CLI's defaults) and compared with.
    static analyzer::CompareOptions options();
};

// The run's timeline index, built after the session is shown (it is the largest part of opening a big trace that
// the dashboard does not need).
struct SessionTimeline {
    std::shared_ptr<const AnalysedTrace> run; // the trace it indexes
    analyzer::TimelineIndex index;
};

} // namespace fp8scope::gui
