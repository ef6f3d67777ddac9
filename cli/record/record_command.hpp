// `fp8scope record [options] [--] COMMAND...`: runs a command with the collector injected, then summarizes the
// traces it wrote. Exits with the command's exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fp8scope::cli {

// The collector library cannot be found. 69 is EX_UNAVAILABLE of sysexits.h: it cannot be mistaken for a trace
// verdict (1-3), and a command's own exit code rarely is 69.
inline constexpr int kExitCollectorMissing = 69;

struct RecordOptions {
    std::string output_pattern; // -o; empty: the collector's default (fp8scope-%h-%p.sqlite in each cwd)
    bool latency_timestamps = false;
    bool no_latency_timestamps = false;
    bool no_nvtx = false;
    bool quiet = false;
    // Capture windows, as given (checked by parse_capture_plan, passed on as FP8SCOPE_CAPTURE_* variables).
    std::string capture_steps, capture_every, capture_length, capture_range, delay, duration;
    bool stats_outside_windows = false;
    std::string max_size; // MiB
    bool monitor = false; // the preset of --capture-every/--capture-length/--max-size (kMonitor* in the .cpp)
    std::vector<std::string> command; // taken out of argv by split_record_command, never parsed by CLI11
};

// Adds the `record` subcommand to `app`; its parsed options land in `options`, which must outlive parsing.
CLI::App* add_record_command(CLI::App& app, RecordOptions& options);

// When argv names the `record` subcommand, moves the command (everything after the first "--", or from the
// first argument that is neither an option of record nor an option's value) into options.command and returns
// the arguments before it, for CLI11. The command's own options (`python train.py --lr 3`) therefore never
// reach CLI11, and an option of record written after the command belongs to the command, as with `env` or
// `nsys profile`. Otherwise returns argv unchanged.
std::vector<const char*> split_record_command(
    const CLI::App& record, int argc, const char* const* argv, RecordOptions& options);

// A usage error that CLI11 cannot see (no command, an empty -o, a bad or senseless capture window), as the text
// after "usage error: ".
std::optional<std::string> record_usage_error(const RecordOptions& options);

// Runs the command and prints the summary. Returns the command's exit code (128 + N if signal N ended it,
// 127 / 126 if it could not be found / executed), or kExitCollectorMissing.
int run_record(const RecordOptions& options);

} // namespace fp8scope::cli
