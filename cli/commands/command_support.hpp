// What every subcommand that reads a trace does the same way: load it (exit 3 with one line on failure), write
// the result to stdout (exit 74 on failure), decide on terminal styling (bold, colour).
#pragma once

#include "commands/cli_error.hpp"

#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <string>
#include <string_view>

namespace fp8scope::cli {

// The loaded trace, or kExitBadTrace with the loader's one line. `progress`: a CommandProgress stage's hook, or none.
CliExpected<analyzer::TraceModel> load_trace_model(
    const std::string& path, const analyzer::ProgressHook& progress = {});

// The trace's summary (analyzer::load_trace_summary; with `read_rows`, from a full load that checks every row), or
// kExitBadTrace with the loader's one line.
CliExpected<analyzer::TraceSummary> load_trace_summary(
    const std::string& path, bool read_rows, const analyzer::ProgressHook& progress = {});

// "fp8scope: error: <message>" on stderr, as one line (line breaks become spaces): a trace that cannot be read, or
// two that cannot be compared.
void print_error(std::string_view message);
// "fp8scope: warning: <message>" on stderr.
void print_warning(std::string_view message);

// "fp8scope: usage error: <message>" and "Run 'fp8scope <command> --help' ..." on stderr; returns kExitUsage.
int usage_error(std::string_view command, std::string_view message);
// How a command ends on `error`: usage_error() for kExitUsage, print_error() for any other; returns its exit code.
int print_failure(std::string_view command, const CliError& error);

// Writes everything to stdout and flushes; kExitOk, or kExitOutput after one line on stderr.
int write_stdout(const std::string& text);
// `text` into the file at `path` (created or truncated); false after "fp8scope: error: cannot write '<path>': <why>".
bool write_text_file(const std::string& path, const std::string& text);
// `-o FILE`: `text` to the file when `path` is set, else to stdout; kExitOk or kExitOutput.
int write_output(const std::string& path, const std::string& text);

// Bold headings only for a person at a terminal: never in pipes, files or CI logs, and never with NO_COLOR set
// (no-color.org) or on a dumb terminal.
bool use_bold_headings();

// `--color auto|always|never`: "always" and "never" decide (over NO_COLOR too, as no-color.org allows a flag to);
// "auto" is use_bold_headings()'s rule. The same rule then covers colour and bold.
bool use_color(std::string_view choice);
// use_color() for output that goes to `output_path` (-o) when set: a file gets colour only with "always".
bool use_color(std::string_view choice, const std::string& output_path);

} // namespace fp8scope::cli
