// The Kernels view's table (docs/gui.md "Kernels"; docs/analysis.md "Queries for the viewer"): one row per distinct
// kernel name with its class, count and duration figures over the whole trace, and count and time per analysed step.
// Computed once, in one pass over the kernels (Tracy computes its per-zone statistics at load the same way), so the
// table opens and sorts without touching the model again.
#pragma once

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp8scope::analyzer {

// One name's kernels in one analysed step (a kernel belongs to the step that contains its start, as in
// classify_kernels()).
struct KernelStepFigures {
    size_t step = 0; // position in StepSet::steps
    int64_t count = 0;
    int64_t time_ns = 0; // summed durations
};

struct KernelTableRow {
    StringRef name; // the demangled name; the short name when the demangled one is empty
    KernelClass cls = KernelClass::Other; // classify_kernel_name() of that name
    // Over every kernel of the trace with this name (warm-up and outside the steps included). The collector's own
    // kernels are not in the model's kernel table (collector_work.hpp), so never here.
    int64_t count = 0;
    int64_t total_ns = 0;
    int64_t min_ns = 0, max_ns = 0;
    double mean_ns = 0; // total_ns / count
    double stddev_ns = 0; // population standard deviation of the durations
    // Over the analysed steps only.
    int64_t count_in_steps = 0;
    int64_t time_in_steps_ns = 0;
    double count_per_step = 0; // count_in_steps / number of steps (0 without steps)
    double time_per_step_ns = 0; // time_in_steps_ns / number of steps
    std::vector<KernelStepFigures> per_step; // only the steps where the name ran, in step order
};

struct KernelTableResult {
    std::vector<KernelTableRow> rows; // most total time first (ties: more kernels, then name index)
    size_t steps = 0; // StepSet::steps.size(), the denominator of the per-step figures
    int64_t kernels = 0; // every kernel of the trace
    int64_t total_ns = 0; // their summed durations
};

// One row per distinct name (the demangled name, else the short name; kernels with neither are one row with an
// empty name). O(kernels + names log names + steps).
KernelTableResult kernel_table(const TraceModel& model, const StepSet& steps);

} // namespace fp8scope::analyzer
