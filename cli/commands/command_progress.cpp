#include "commands/command_progress.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sys/ioctl.h>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

// The bar of the command running now; the CLI runs one command, on one thread (the hooks' threads only draw).
ProgressBar* g_active = nullptr;

// Signals that end the process while a bar may be on the terminal: Ctrl-C and kill.
constexpr int kEndingSignals[] = { SIGINT, SIGTERM };

// Erases the bar's line (write(2) is async-signal-safe), then lets the signal end the process as it would have:
// the handler was installed with SA_RESETHAND, so raising it again takes the default action.
void erase_line_and_reraise(int signal_number)
{
    const ssize_t ignored = ::write(STDERR_FILENO, kProgressClear.data(), kProgressClear.size());
    static_cast<void>(ignored);
    std::raise(signal_number);
}

void write_stderr(std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t written = ::write(STDERR_FILENO, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return; // a bar is not worth an error
        bytes.remove_prefix(static_cast<size_t>(written));
    }
}

int stderr_columns()
{
    winsize size {};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
        return size.ws_col;
    return 80;
}

std::chrono::nanoseconds monotonic_now()
{
    return std::chrono::steady_clock::now().time_since_epoch();
}

// The bar is for a person at a terminal that can redraw a line: never for a pipe, a file or a dumb terminal.
bool stderr_takes_a_bar()
{
    if (::isatty(STDERR_FILENO) == 0)
        return false;
    const char* term = std::getenv("TERM");
    return term == nullptr || std::strcmp(term, "dumb") != 0;
}

// FP8SCOPE_PROGRESS_DELAY_MS, for tests that need a bar without a second of work; ignored unless a whole number.
ProgressTiming timing_from_environment()
{
    ProgressTiming timing;
    if (const char* text = std::getenv("FP8SCOPE_PROGRESS_DELAY_MS")) {
        const std::string_view value(text);
        int64_t ms = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc() && end == value.data() + value.size() && ms >= 0)
            timing.delay = std::chrono::milliseconds(ms);
    }
    return timing;
}

struct sigaction g_previous[std::size(kEndingSignals)];
bool g_installed[std::size(kEndingSignals)] = {};

void install_signal_handlers()
{
    struct sigaction action { };
    action.sa_handler = erase_line_and_reraise;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kEndingSignals); ++i) {
        // A signal the parent set to be ignored (nohup) stays ignored.
        g_installed[i] = ::sigaction(kEndingSignals[i], nullptr, &g_previous[i]) == 0
            && g_previous[i].sa_handler == SIG_DFL && ::sigaction(kEndingSignals[i], &action, nullptr) == 0;
    }
}

void restore_signal_handlers()
{
    for (size_t i = 0; i < std::size(kEndingSignals); ++i)
        if (std::exchange(g_installed[i], false))
            ::sigaction(kEndingSignals[i], &g_previous[i], nullptr);
}

} // namespace

void add_progress_option(CLI::App& command, bool& no_progress)
{
    command.add_flag("--no-progress", no_progress,
        "No progress bar on stderr (it is shown only on a terminal, for work over a second)");
}

void add_output_option(CLI::App& command, std::string& path)
{
    command.add_option("-o,--output", path, "Write the output to FILE instead of stdout (created or replaced)");
}

CommandProgress::CommandProgress(std::vector<ProgressStage> stages, bool no_progress)
{
    if (no_progress || g_active != nullptr || !stderr_takes_a_bar())
        return;
    bar_ = std::make_unique<ProgressBar>(std::move(stages),
        ProgressTerminal { .write = write_stderr, .columns = stderr_columns, .now = monotonic_now },
        timing_from_environment());
    g_active = bar_.get();
    install_signal_handlers();
}

CommandProgress::~CommandProgress()
{
    if (!bar_)
        return;
    g_active = nullptr;
    bar_.reset(); // erases the line
    restore_signal_handlers();
}

analyzer::ProgressHook CommandProgress::next_stage()
{
    return bar_ ? bar_->next_stage() : analyzer::ProgressHook {};
}

void clear_progress_line()
{
    if (g_active != nullptr)
        g_active->clear();
}

} // namespace fp8scope::cli
