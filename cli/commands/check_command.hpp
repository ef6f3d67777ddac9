// `fp8scope check TRACE --max-bubble-ratio R --max-syncs-per-step N --max-launch-bound-ratio R
// --max-saturation R --max-underflow R --no-nonfinite [--ref REF [--max-loss-delta R] [--max-drift-sites N]
// [--loss-scalar NAME]] [--junit FILE] [--md FILE] [--steps A:B] [--device N] [--warmup N] [--step-pattern RE]`:
// the CI gate. With several traces (or a directory), the ranks of one job: --max-bubble-ratio on the worst rank and
// --max-straggler-wait DURATION on the largest per-step wait of any rank. With --ref, TRACE is compared with its
// reference as `compare` does, and gated on drift and loss.
#pragma once

#include "inputs/trace_args.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace fp8scope::cli {

struct CheckCliOptions {
    ReportCliOptions report; // trace, steps, device, warm-up, step pattern (format unused)
    std::optional<double> max_bubble_ratio; // several traces: the worst rank's
    std::string max_straggler_wait; // several traces: a duration with its unit (parse_duration_ns()); "" not given
    std::optional<double> max_syncs_per_step;
    std::optional<double> max_launch_bound_ratio;
    std::string max_step_time; // a duration with its unit (parse_duration_ns()); "" not given
    std::optional<double> max_saturation;
    std::optional<double> max_underflow;
    bool no_nonfinite = false;
    // --ref: the reference trace; the compare budgets need it. With --ref and neither of them, both defaults apply.
    std::string ref_path;
    std::optional<double> max_loss_delta;
    std::optional<int64_t> max_drift_sites;
    std::string loss_scalar = "loss";
    std::string junit_path;
    std::string md_path;
};

CLI::App* add_check_command(CLI::App& app, CheckCliOptions& options);
int run_check(const CheckCliOptions& options);

} // namespace fp8scope::cli
