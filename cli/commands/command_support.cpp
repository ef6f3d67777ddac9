#include "commands/command_support.hpp"

#include "commands/command_progress.hpp"
#include "commands/exit_codes.hpp"

#include "fp8scope/analyzer/load/trace_loader.hpp"

#include <fmt/format.h>

#include <fstream>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

// Error messages from the loader are one line already; this keeps the promise even if one is not.
std::string one_line(std::string text)
{
    for (char& c : text) {
        if (c == '\n' || c == '\r')
            c = ' ';
    }
    return text;
}

} // namespace

void print_error(std::string_view message)
{
    clear_progress_line();
    fmt::print(stderr, "fp8scope: error: {}\n", one_line(std::string(message)));
}

void print_warning(std::string_view message)
{
    clear_progress_line();
    fmt::print(stderr, "fp8scope: warning: {}\n", message);
}

bool use_bold_headings()
{
    if (isatty(STDOUT_FILENO) == 0 || std::getenv("NO_COLOR") != nullptr)
        return false;
    const char* term = std::getenv("TERM");
    return term != nullptr && std::strcmp(term, "dumb") != 0;
}

bool use_color(std::string_view choice)
{
    if (choice == "always")
        return true;
    if (choice == "never")
        return false;
    return use_bold_headings();
}

bool use_color(std::string_view choice, const std::string& output_path)
{
    return output_path.empty() ? use_color(choice) : choice == "always";
}

int usage_error(std::string_view command, std::string_view message)
{
    clear_progress_line();
    fmt::print(
        stderr, "fp8scope: usage error: {}\nRun 'fp8scope {} --help' for usage and examples.\n", message, command);
    return kExitUsage;
}

int print_failure(std::string_view command, const CliError& error)
{
    if (error.exit_code == kExitUsage)
        return usage_error(command, error.message);
    print_error(error.message);
    return error.exit_code;
}

int write_stdout(const std::string& text)
{
    clear_progress_line();
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        fmt::print(stderr, "fp8scope: error: cannot write to stdout: {}\n", std::strerror(errno));
        return kExitOutput;
    }
    return kExitOk;
}

bool write_text_file(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (out)
        return true;
    fmt::print(stderr, "fp8scope: error: cannot write '{}': {}\n", path, std::strerror(errno));
    return false;
}

int write_output(const std::string& path, const std::string& text)
{
    if (path.empty())
        return write_stdout(text);
    clear_progress_line();
    return write_text_file(path, text) ? kExitOk : kExitOutput;
}

namespace {

// The loader returns errors as values; an exception here (std::bad_alloc on a huge or hostile file) is still a trace
// this build cannot load, so it gets the bad-trace exit code and one line.
template <class T, class Load> CliExpected<T> guarded_load(const std::string& path, Load load)
{
    try {
        auto loaded = load();
        if (loaded)
            return std::move(*loaded);
        return std::unexpected(to_cli_error(std::move(loaded.error())));
    } catch (const std::exception& e) {
        return cli_failure(kExitBadTrace, fmt::format("{}: cannot load trace: {}", path, e.what()));
    }
}

} // namespace

CliExpected<analyzer::TraceModel> load_trace_model(const std::string& path, const analyzer::ProgressHook& progress)
{
    return guarded_load<analyzer::TraceModel>(path, [&] { return analyzer::load_trace(path, progress); });
}

CliExpected<analyzer::TraceSummary> load_trace_summary(
    const std::string& path, bool read_rows, const analyzer::ProgressHook& progress)
{
    if (read_rows) {
        auto model = load_trace_model(path, progress);
        if (!model)
            return std::unexpected(model.error());
        return analyzer::summarize(*model);
    }
    return guarded_load<analyzer::TraceSummary>(path, [&] { return analyzer::load_trace_summary(path, progress); });
}

} // namespace fp8scope::cli
