#include "info_command.hpp"

#include "exit_codes.hpp"
#include "info_render.hpp"

#include "fp8scope/analyzer/trace_loader.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

constexpr const char* kInfoExamples = R"(Examples:
  fp8scope info samples/traces/scenario-demo.sqlite
  fp8scope info run.sqlite --format json
  fp8scope info report.sqlite     (an Nsight Systems export: nsys export --type sqlite)

Exit codes: 0 ok, 2 usage error, 3 unreadable or invalid trace (one line on stderr), 70 internal error.
The JSON object is documented in docs/cli.md.
)";

// Bold headings only for a person at a terminal: never in pipes, files or CI logs, and never with NO_COLOR
// set (no-color.org) or on a dumb terminal.
bool use_bold_headings()
{
    if (isatty(STDOUT_FILENO) == 0 || std::getenv("NO_COLOR") != nullptr)
        return false;
    const char* term = std::getenv("TERM");
    return term != nullptr && std::strcmp(term, "dumb") != 0;
}

// Error messages from the loader are one line already; this keeps the promise even if one is not.
std::string one_line(std::string text)
{
    for (char& c : text) {
        if (c == '\n' || c == '\r')
            c = ' ';
    }
    return text;
}

int fail_bad_trace(const std::string& message)
{
    fmt::print(stderr, "fp8scope: error: {}\n", one_line(message));
    return kExitBadTrace;
}

int write_stdout(const std::string& text)
{
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        fmt::print(stderr, "fp8scope: error: cannot write to stdout: {}\n", std::strerror(errno));
        return kExitOutput;
    }
    return kExitOk;
}

} // namespace

CLI::App* add_info_command(CLI::App& app, InfoOptions& options)
{
    CLI::App* info = app.add_subcommand("info", "Show what a trace holds: origin, process, GPUs, time span, rows");
    info->add_option("TRACE", options.trace_path, "Trace file: an fp8scope trace or an Nsight Systems SQLite export")
        ->required();
    info->add_option("--format", options.format, "Output format")
        ->check(CLI::IsMember({ "text", "json" }))
        ->default_str("text");
    info->footer(kInfoExamples);
    return info;
}

int run_info(const InfoOptions& options)
{
    Expected<analyzer::TraceModel> model = make_error(ErrorCode::Io, "not loaded");
    // The loader returns errors as values; an exception here (std::bad_alloc on a huge or hostile file) is
    // still a trace this build cannot load, so it gets the bad-trace exit code and one line.
    try {
        model = analyzer::load_trace(options.trace_path);
    } catch (const std::exception& e) {
        return fail_bad_trace(fmt::format("{}: cannot load trace: {}", options.trace_path, e.what()));
    }
    if (!model)
        return fail_bad_trace(model.error().message);

    if (options.format == "json") {
        const auto json = render_info_json(*model);
        // Replace invalid UTF-8 rather than throw: trace text is untrusted.
        return write_stdout(json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    }
    return write_stdout(render_info_text(*model, TextStyle { .bold_headings = use_bold_headings() }));
}

} // namespace fp8scope::cli
