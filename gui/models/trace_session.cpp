#include "models/trace_session.hpp"

namespace fp8scope::gui {

analyzer::CompareOptions Session::options()
{
    return analyzer::CompareOptions {};
}

std::optional<AnalysedTrace> Session::analyse(analyzer::TraceModel model, QString& problem)
{
    analyzer::Report report = analyzer::analyze(model, options().report);
    if (!report.selection.empty.empty()) {
        problem = QString::fromStdString(model.path + ": " + report.selection.empty);
        return std::nullopt;
    }
    if (report.steps.steps.empty()) {
        // The CLI's report says the same in its own words (report_text.cpp); a window of nothing helps no one.
        problem = QString::fromStdString(model.path + ": no steps: the trace has no activity to analyse");
        return std::nullopt;
    }
    analyzer::WhatIf what_if = analyzer::estimate_what_if(report);
    return AnalysedTrace { std::move(model), std::move(report), std::move(what_if) };
}

} // namespace fp8scope::gui
