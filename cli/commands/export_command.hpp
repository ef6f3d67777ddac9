// `fp8scope export TRACE --perfetto OUT.json[.gz] [--steps A:B] [--device N] [--warmup N] [--step-pattern RE]
// [--step-source SOURCE] [--no-progress]`: the trace and its analysis as Chrome-trace JSON for Perfetto UI,
// chrome://tracing and Holistic Trace Analysis (export/kineto_trace.hpp; docs/cli.md, docs/export.md).
#pragma once

#include "inputs/trace_args.hpp"

#include <string>

namespace CLI {
class App;
}

namespace fp8scope::cli {

struct ExportCliOptions {
    ReportCliOptions analysis; // the trace (trace_path) and the selection options `report` takes
    std::string perfetto_path;
};

CLI::App* add_export_command(CLI::App& app, ExportCliOptions& options);
int run_export(const ExportCliOptions& options);

} // namespace fp8scope::cli
