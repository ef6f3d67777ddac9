// `fp8scope report TRACE [--format text|json|md|html|junit|csv] [--table steps|kernels|api] [--color
// auto|always|never] [--steps A:B] [--device N] [--warmup N] [--step-pattern RE]`: the diagnosis of one trace
// (docs/analysis.md), rendered; several traces, or --merge, the ranks of one job.
#pragma once

#include "inputs/trace_args.hpp"

namespace CLI {
class App;
}

namespace fp8scope::cli {

CLI::App* add_report_command(CLI::App& app, ReportCliOptions& options);
int run_report(const ReportCliOptions& options);

} // namespace fp8scope::cli
