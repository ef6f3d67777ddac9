#include "models/trace_session.hpp"

#include "fp8scope/present/selection_wording.hpp"

#include <algorithm>

namespace fp8scope::gui {

analyzer::CompareOptions Session::options()
{
    return analyzer::CompareOptions {};
}

Expected<AnalysedTrace> AnalysedTrace::analyse(analyzer::TraceModel model, const analyzer::ProgressHook& progress)
{
    Expected<analyzer::Report> report = analyzer::analyze(model, Session::options().report, progress);
    if (!report)
        return std::unexpected(report.error());
    if (report->selection.empty)
        return make_error(
            ErrorCode::InvalidTrace, model.path + ": " + present::empty_selection_text(report->selection));
    if (report->steps.steps.empty()) // the CLI's report says the same in its own words (report_text.cpp)
        return make_error(ErrorCode::InvalidTrace, model.path + ": no steps: the trace has no activity to analyse");
    AnalysedTrace analysed;
    analysed.model = std::move(model);
    analysed.report = std::move(*report);
    analysed.what_if = analyzer::estimate_what_if(analysed.report);
    analysed.fp8_whatif = analyzer::predict_fp8(analysed.model, analysed.report);
    analysed.kernels = analyzer::kernel_table(analysed.model, analysed.report.steps);
    analysed.tensor_series
        = analyzer::tensor_series(analysed.model, analysed.report.steps, Session::options().report.device);
    return analysed;
}

const analyzer::TensorSiteSeries* AnalysedTrace::series_of(int64_t site_id) const
{
    const auto it = std::ranges::lower_bound(tensor_series, site_id, {}, &analyzer::TensorSiteSeries::site_id);
    return it != tensor_series.end() && it->site_id == site_id ? &*it : nullptr;
}

} // namespace fp8scope::gui
