#include "trace_info/capture_notice.hpp"

#include "fp8scope/common/capture_plan.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <charconv>

namespace fp8scope::cli {
namespace {

// Meta nvtx_step_ranges: the NVTX step ranges the collector saw pushed, which CUPTI records only inside windows.
std::optional<int64_t> nvtx_step_ranges(const analyzer::TraceMeta& meta)
{
    const auto found = meta.raw.find(std::string(schema::meta::kNvtxStepRanges));
    if (found == meta.raw.end())
        return std::nullopt;
    const std::string& text = found->second;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0)
        return std::nullopt;
    return value;
}

} // namespace

std::optional<std::string> capture_never_opened(const analyzer::TraceModel& model)
{
    return capture_never_opened(analyzer::summarize(model));
}

std::optional<std::string> capture_never_opened(const analyzer::TraceSummary& model)
{
    const analyzer::CaptureInfo& capture = model.capture;
    if (!capture.windowed || !capture.windows.empty() || (capture.mode != "steps" && capture.mode != "periodic"))
        return std::nullopt;
    std::optional<StepsSeen> steps;
    if (model.marked_steps) {
        // Markers are written inside and outside windows, and decide the steps once the job gives one.
        steps = StepsSeen { model.marked_steps->first, model.marked_steps->second, false };
    } else if (const std::optional<int64_t> ranges = nvtx_step_ranges(model.meta); ranges && *ranges > 0) {
        // The k-th range is step k - 1. An unfinished trace holds the count written at the first range only.
        steps = StepsSeen { 0, *ranges - 1, !model.meta.finished };
    }
    return capture_never_opened_text(capture.options, steps);
}

} // namespace fp8scope::cli
