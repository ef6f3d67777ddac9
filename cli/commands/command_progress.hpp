// The progress bar of a command's long work (loading, analysing, comparing), on stderr: drawn only when stderr is a
// terminal that is not TERM=dumb, --no-progress is not given, and the work has run over a second
// (FP8SCOPE_PROGRESS_DELAY_MS changes that second, for tests). Piped and redirected stderr, CI logs and quick runs
// never see a byte of it. docs/cli.md, "Progress".
#pragma once

#include "output/progress_bar.hpp"

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fp8scope::cli {

// Adds --no-progress to `command`.
void add_progress_option(CLI::App& command, bool& no_progress);
// Adds -o/--output FILE to `command` (report, check, compare, info): the output goes there instead of stdout
// (write_output() in command_support.hpp).
void add_output_option(CLI::App& command, std::string& path);

// One command's bar, for as long as it lives; erased when it ends, however it ends (an error, an exception, Ctrl-C).
// While it lives, every line the CLI prints on stderr or stdout first calls clear_progress_line().
class CommandProgress {
public:
    CommandProgress(std::vector<ProgressStage> stages, bool no_progress);
    ~CommandProgress();
    CommandProgress(const CommandProgress&) = delete;
    CommandProgress& operator=(const CommandProgress&) = delete;

    // The next stage's hook; empty (the analyzer then reports nothing) when no bar is shown.
    analyzer::ProgressHook next_stage();

private:
    std::unique_ptr<ProgressBar> bar_;
};

// Erases the bar's line when one is drawn, so that a message starts in the first column and no bar is left in it.
void clear_progress_line();

} // namespace fp8scope::cli
