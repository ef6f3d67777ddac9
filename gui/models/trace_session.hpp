// What the viewer shows: one trace loaded and analysed, optionally with a reference run compared against it. Built
// in the background by SessionLoader, then shared read-only (std::shared_ptr<const ...>) by every model and view, so
// that a view never sees a half-built session and a stale one lives until its last reader lets go.
#pragma once

#include "fp8scope/analyzer/compare.hpp"
#include "fp8scope/analyzer/recommendations.hpp"
#include "fp8scope/analyzer/report.hpp"
#include "fp8scope/analyzer/trace_model.hpp"

#include <QString>

#include <memory>
#include <optional>

namespace fp8scope::gui {

// One trace as the analyzer sees it: the model, the report and the what-if estimates with their recommendations.
struct AnalysedTrace {
    analyzer::TraceModel model;
    analyzer::Report report;
    analyzer::WhatIf what_if;
};

struct Session {
    std::shared_ptr<const AnalysedTrace> run;
    std::shared_ptr<const AnalysedTrace> ref; // null without a reference
    std::optional<analyzer::CompareResult> compare; // set when ref is, and the analyzer compared them

    // The analysis options both traces are analysed with (the CLI's defaults) and compared with.
    static analyzer::CompareOptions options();
    // Analyses a loaded trace. nullopt, with `problem` set, when the trace has nothing to show (no steps).
    static std::optional<AnalysedTrace> analyse(analyzer::TraceModel model, QString& problem);
};

} // namespace fp8scope::gui
