// `fp8scope compare RUN REF [--format text|json|md|html|junit] [--color auto|always|never] [--steps A:B]
// [--device N] [--warmup N] [--step-pattern RE] [--step-source SOURCE] [--loss-scalar NAME]`: an FP8 run against
// its reference (typically BF16) on the same steps: scaling drift per tensor site, the loss delta and the
// performance of both (docs/analysis.md "Compare"), rendered. `check --ref` gates on the same comparison.
#pragma once

#include "inputs/trace_args.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace fp8scope::cli {

struct CompareCliOptions {
    ReportCliOptions report; // RUN (trace_path), format, colour, and the selection both traces are analysed with
    std::string ref_path;
    std::string loss_scalar = "loss";
};

CLI::App* add_compare_command(CLI::App& app, CompareCliOptions& options);
int run_compare(const CompareCliOptions& options);

// Both traces, analysed with the same options, and the analyzer's comparison of them.
struct ComparedRuns {
    AnalysedTrace run, ref;
    analyzer::CompareResult result;
    analyzer::CompareInput input() const { return { run.model, run.report, ref.model, ref.report }; }
};

// What the caller needs of the comparison: the performance alone (`compare`, which shows what it could compare), or
// drift and loss too (`check --ref`, which gates on them).
enum class CompareNeeds { Performance, Numerics };

// What `compare` and `check --ref` do alike once the options are parsed: load both traces (kExitBadTrace when one
// cannot be read), analyse each with `options`' selection (kExitUsage when it leaves nothing in either), and compare
// them; traces that cannot be compared are kExitBadTrace with the analyzer's reason, and so, with
// CompareNeeds::Numerics, are traces whose drift and loss cannot be compared.
CliExpected<ComparedRuns> load_and_compare(
    const ReportCliOptions& options, const std::string& ref_path, const std::string& loss_scalar, CompareNeeds needs);

} // namespace fp8scope::cli
