// `fp8scope info TRACE [--format text|json]`: what a trace is, where it came from and what it holds.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace fp8scope::cli {

struct InfoOptions {
    std::string trace_path;
    std::string format = "text";
    bool no_progress = false; // --no-progress (command_progress.hpp)
    bool read_rows = false; // --read-rows: load every row (and check it) instead of the finished trace's meta
    std::string output; // -o FILE
};

// Adds the `info` subcommand to `app`; its parsed arguments land in `options`, which must outlive parsing.
CLI::App* add_info_command(CLI::App& app, InfoOptions& options);

// Reads the trace's summary and prints it. Returns an ExitCode. Bad traces print one line on stderr and nothing on
// stdout.
int run_info(const InfoOptions& options);

} // namespace fp8scope::cli
