// The CLI's progress bar (docs/cli.md "Progress": a progress bar on stderr for work over a second on a TTY): one line,
// redrawn in place with \r, for work made of stages laid end to end ("loading", "analysing"), each fed by the
// analyzer's ProgressHook. This is the logic alone: the terminal, its width and the clock are given to it, so that
// tests can drive it; command_progress.hpp wires it to stderr.
#pragma once

#include "fp8scope/analyzer/model/progress.hpp"

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli {

struct ProgressStage {
    std::string name; // what the line says while the stage runs: "loading the run"
    double weight = 1; // its share of the bar, relative to the other stages (analyzer::StageWeight)
};

struct ProgressTerminal {
    std::function<void(std::string_view bytes)> write;
    std::function<int()> columns; // the terminal's width now
    std::function<std::chrono::nanoseconds()> now; // a monotonic clock
};

struct ProgressTiming {
    // Nothing is drawn before the work has run this long: a quick command prints no bar at all.
    std::chrono::nanoseconds delay = std::chrono::seconds(1);
    // At most one redraw per interval: the hook is called hundreds of times a second.
    std::chrono::nanoseconds interval = std::chrono::milliseconds(100);
};

// Erases the line the cursor is on, from its first column: "\r" and ANSI "erase in line" (ECMA-48 EL).
inline constexpr std::string_view kProgressClear = "\r\x1b[K";

// The bar's line for `stage` at `fraction` (0 to 1) of the whole work, at most `columns` - 1 characters so that the
// terminal never wraps it: "loading the run [########............]  40%". A terminal too narrow for a bar of 10 cells
// gets "loading the run 40%", cut to fit.
std::string progress_line(std::string_view stage, double fraction, int columns);

class ProgressBar {
public:
    ProgressBar(std::vector<ProgressStage> stages, ProgressTerminal terminal, ProgressTiming timing = {});
    ~ProgressBar(); // clear()
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    // Starts the next stage (the stages given, in order) and returns its hook, which maps the stage's fraction onto
    // the bar and always returns true (the CLI does not cancel; Ctrl-C ends the process). The hook may be called
    // from any thread; it takes a lock, reads the clock and returns unless a redraw is due.
    analyzer::ProgressHook next_stage();

    // Erases the bar's line when one is drawn, so that whatever is printed next starts in the first column. A later
    // report draws it again. Called before any other output, and on completion (the destructor).
    void clear();

private:
    void report(size_t stage, double fraction);

    const std::vector<ProgressStage> stages_;
    const ProgressTerminal terminal_;
    const ProgressTiming timing_;
    const std::chrono::nanoseconds start_;
    double total_weight_ = 0;
    size_t next_stage_ = 0;
    double next_from_ = 0; // weight of the stages before the next one

    std::mutex mutex_; // the hook's thread against the main thread's clear()
    bool drawn_ = false; // a line is on the terminal
    std::optional<std::chrono::nanoseconds> last_draw_;
    std::string last_line_;
};

} // namespace fp8scope::cli
