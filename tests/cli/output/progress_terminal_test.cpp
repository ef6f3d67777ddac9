// The progress bar end to end: the real fp8scope with stderr on a pipe (no bar: stderr is byte for byte what
// --no-progress gives) and on a pseudo-terminal (the bar is drawn, erased before any message, and gone at the end).
// FP8SCOPE_PROGRESS_DELAY_MS=0 stands in for a second of work on the small sample traces.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kSamples = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kFp8Trace = kSamples + "h100-train-fp8.sqlite";
const std::string kDriftRun = kSamples + "compare/h100-drift-fp8.sqlite";
const std::string kDriftRef = kSamples + "compare/h100-drift-bf16.sqlite";
const std::string kRanks = kSamples + "ranks/fp8-straggler"; // two ranks of a real NCCL job
constexpr std::string_view kClear = "\r\x1b[K";
constexpr std::string_view kErase = "\x1b[K";

// Sets an environment variable for one test (nullptr: unsets it), and puts back what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value)
        : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        set(value);
    }
    ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }

private:
    void set(const char* value)
    {
        if (value)
            ::setenv(name_, value, 1);
        else
            ::unsetenv(name_);
    }
    const char* name_;
    std::optional<std::string> old_;
};

struct TerminalRun {
    int exit_code = -1;
    std::string terminal; // every byte fp8scope wrote to the terminal (its stderr)
    std::string out; // its stdout, sent to a file
};

// Runs fp8scope with stdin and stderr on a new pseudo-terminal `columns` wide, in raw mode (bytes arrive as written,
// "\n" is not made "\r\n"), and stdout in a file, as `fp8scope report big.sqlite > report.txt` in a terminal.
TerminalRun run_on_terminal(const std::vector<std::string>& args, const std::string& dir, int columns = 60)
{
    const std::string out_path = dir + "/stdout.txt";
    termios raw {};
    cfmakeraw(&raw);
    winsize size {};
    size.ws_row = 24;
    size.ws_col = static_cast<unsigned short>(columns);
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, &raw, &size);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || ::dup2(out, STDOUT_FILENO) < 0)
            ::_exit(126);
        std::vector<char*> argv { const_cast<char*>(FP8SCOPE_EXE) };
        for (const auto& arg : args)
            argv.push_back(const_cast<char*>(arg.c_str()));
        argv.push_back(nullptr);
        ::execv(FP8SCOPE_EXE, argv.data());
        ::_exit(127);
    }
    TerminalRun run;
    for (;;) {
        pollfd fd { master, POLLIN, 0 };
        const int ready = ::poll(&fd, 1, 30'000);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            ::kill(pid, SIGKILL);
            break; // the exit code then fails the test
        }
        char buffer[4096];
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n <= 0)
            break; // EIO: the child has closed the terminal's last descriptor
        run.terminal.append(buffer, static_cast<size_t>(n));
    }
    ::close(master);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = read_text_file(out_path);
    return run;
}

// The bar's lines, "\r<line>\x1b[K", as drawn.
std::vector<std::string> bar_lines(const std::string& terminal)
{
    std::vector<std::string> lines;
    for (size_t at = terminal.find('\r'); at != std::string::npos; at = terminal.find('\r', at + 1)) {
        const size_t end = terminal.find(kErase, at);
        REQUIRE(end != std::string::npos);
        if (end > at + 1)
            lines.push_back(terminal.substr(at + 1, end - at - 1));
    }
    return lines;
}

// The terminal's bytes without the bar: every "\r<line>\x1b[K" and "\r\x1b[K" taken out.
std::string without_bar(std::string terminal)
{
    for (size_t at = terminal.find('\r'); at != std::string::npos; at = terminal.find('\r', at)) {
        const size_t end = terminal.find(kErase, at);
        REQUIRE(end != std::string::npos);
        REQUIRE(terminal.find('\n', at) > end); // a bar line never holds a line break
        terminal.erase(at, end + kErase.size() - at);
    }
    return terminal;
}

} // namespace

TEST_CASE("FP8SCOPE_PRINT_SQL=1 lists the loader's statements on stderr, unset or another value, nothing",
    "[cli][diagnostics]")
{
    // bench/report_bench.sh times SQLite's scan of exactly these statements' rows (bench/scan_bench.cpp).
    const auto quiet = run_fp8scope({ "info", kFp8Trace });
    CHECK(quiet.err.empty());
    {
        const ScopedEnv sql("FP8SCOPE_PRINT_SQL", "yes");
        CHECK(run_fp8scope({ "info", kFp8Trace }).err.empty());
    }
    const ScopedEnv sql("FP8SCOPE_PRINT_SQL", "1");
    const auto listed = run_fp8scope({ "info", kFp8Trace });
    CHECK(listed.exit_code == 0);
    CHECK(listed.out == quiet.out);
    CHECK(listed.err.find("fp8scope sql: SELECT \"start\", \"duration\"") != std::string::npos);
    CHECK(listed.err.find("FROM \"FP8SCOPE_KERNEL\"\n") != std::string::npos);
}

TEST_CASE("progress: stderr on a pipe gets no bar, byte for byte what --no-progress gives", "[cli][progress]")
{
    const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", "0");
    const ScopedEnv term("TERM", "xterm");
    const std::vector<std::vector<std::string>> commands { { "info", kFp8Trace }, { "report", kFp8Trace },
        { "report", kFp8Trace, "--steps", "500:600" }, { "check", kFp8Trace, "--max-bubble-ratio", "1" },
        { "compare", kDriftRun, kDriftRef }, { "report", kSamples + "missing.sqlite" }, { "report", kRanks },
        { "check", kRanks, "--max-straggler-wait", "1s" } };
    for (const auto& args : commands) {
        INFO(args[0] << " " << args.back());
        const auto piped = run_fp8scope(args);
        std::vector<std::string> quiet = args;
        quiet.push_back("--no-progress");
        const auto reference = run_fp8scope(quiet);
        CHECK(piped.exit_code == reference.exit_code);
        CHECK(piped.err == reference.err);
        CHECK(piped.out == reference.out);
        CHECK(piped.err.find('\r') == std::string::npos);
        if (piped.exit_code == 0)
            CHECK(piped.err.empty());
    }
}

TEST_CASE("progress: on a terminal the bar is drawn within the width and erased at the end", "[cli][progress]")
{
    const std::string dir = scratch_dir("progress_terminal");
    const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", "0");
    const ScopedEnv term("TERM", "xterm");
    struct Case {
        std::vector<std::string> args;
        std::string first_stage;
    };
    const std::vector<Case> cases { { { "info", kFp8Trace }, "loading [" }, { { "report", kFp8Trace }, "loading [" },
        { { "check", kFp8Trace, "--max-bubble-ratio", "1" }, "loading [" },
        { { "compare", kDriftRun, kDriftRef }, "loading the run [" },
        { { "report", kRanks }, "loading and analysing 2 traces [" },
        { { "check", kRanks, "--max-straggler-wait", "1s" }, "loading and analysing 2 traces [" } };
    for (const auto& [args, first_stage] : cases) {
        INFO(args[0]);
        const TerminalRun run = run_on_terminal(args, dir, 60);
        INFO(run.terminal);
        CHECK(run.exit_code == 0);
        const auto lines = bar_lines(run.terminal);
        REQUIRE(!lines.empty());
        CHECK(lines.front().starts_with(first_stage));
        for (const auto& line : lines) {
            CHECK(line.size() <= 59);
            CHECK(line.ends_with("%"));
        }
        CHECK(run.terminal.ends_with(kClear)); // nothing left on the terminal's line
        CHECK(without_bar(run.terminal).empty()); // and nothing else written there
        CHECK(run.out == run_fp8scope_ok(args)); // stdout as without a terminal
    }
}

TEST_CASE("progress: on a terminal an error is printed after the bar is erased", "[cli][progress]")
{
    const std::string dir = scratch_dir("progress_terminal_error");
    const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", "0");
    const ScopedEnv term("TERM", "xterm");
    // The trace loads (the bar is drawn), then the selection is a usage error.
    const std::vector<std::string> args { "report", kFp8Trace, "--steps", "500:600" };
    const TerminalRun run = run_on_terminal(args, dir);
    INFO(run.terminal);
    CHECK(run.exit_code == 2);
    REQUIRE(!bar_lines(run.terminal).empty());
    const size_t message = run.terminal.find("fp8scope: usage error: ");
    REQUIRE(message != std::string::npos);
    CHECK(run.terminal.substr(0, message).ends_with(kClear));
    CHECK(run.terminal.find('\r', message) == std::string::npos); // no bar after the message
    CHECK(without_bar(run.terminal) == run_fp8scope(args).err);
}

TEST_CASE("progress: no bar for quick work, on a dumb terminal, or with --no-progress", "[cli][progress]")
{
    const std::string dir = scratch_dir("progress_terminal_none");
    const std::vector<std::string> report { "report", kFp8Trace };
    SECTION("a small trace loads and is analysed well within a second")
    {
        const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", nullptr);
        const ScopedEnv term("TERM", "xterm");
        const TerminalRun run = run_on_terminal({ "report", kSamples + "scenario-demo.sqlite" }, dir);
        CHECK(run.exit_code == 0);
        CHECK(run.terminal.empty());
    }
    SECTION("TERM=dumb cannot redraw a line")
    {
        const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", "0");
        const ScopedEnv term("TERM", "dumb");
        const TerminalRun run = run_on_terminal(report, dir);
        CHECK(run.exit_code == 0);
        CHECK(run.terminal.empty());
    }
    SECTION("--no-progress")
    {
        const ScopedEnv delay("FP8SCOPE_PROGRESS_DELAY_MS", "0");
        const ScopedEnv term("TERM", "xterm");
        for (const std::string command : { "info", "report", "check", "compare" }) {
            INFO(command);
            std::vector<std::string> args { command, command == "compare" ? kDriftRun : kFp8Trace };
            if (command == "compare")
                args.push_back(kDriftRef);
            if (command == "check")
                args.insert(args.end(), { "--max-bubble-ratio", "1" });
            args.push_back("--no-progress");
            const TerminalRun run = run_on_terminal(args, dir);
            CHECK(run.exit_code == 0);
            CHECK(run.terminal.empty());
        }
    }
}
