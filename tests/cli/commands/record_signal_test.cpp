// Signals sent to `fp8scope record` reach the command, which decides what they mean; record then exits with
// the command's exit code. These tests need the command running while they signal record, so they spawn record
// themselves instead of using run_process(), which waits.
#include "record_test_support.hpp"

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using namespace fp8scope;
using namespace fp8scope::record_test;

namespace {

struct SignalRun {
    int exit_code = -1;
    bool signaled = false;
    std::string out;
    std::string err;
};

// Runs `fp8scope record -- /bin/sh -c <script>`; once the script has printed "ready\n", sends `signal_number`
// to record (not to the shell), then collects the rest. stderr goes to a file, so only stdout needs reading.
SignalRun signal_record_when_ready(const std::string& script, int signal_number, const std::string& dir)
{
    const auto argv_strings = with_environment(
        { { "FP8SCOPE_LIBRARY", injected_library() } }, { FP8SCOPE_EXE, "record", "--", "/bin/sh", "-c", script });
    std::vector<char*> argv;
    for (const auto& arg : argv_strings)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);

    int out_pipe[2];
    REQUIRE(pipe2(out_pipe, O_CLOEXEC) == 0);
    const std::string err_path = dir + "/stderr.txt";
    posix_spawn_file_actions_t actions;
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    // /usr/bin/env execs fp8scope in place, so `pid` is record's pid once "ready" appears.
    const int spawn_error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    REQUIRE(spawn_error == 0);

    SignalRun run;
    bool signal_sent = false;
    char buffer[256];
    for (;;) {
        const ssize_t n = read(out_pipe[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        run.out.append(buffer, static_cast<size_t>(n));
        if (!signal_sent && run.out.find("ready\n") != std::string::npos) {
            REQUIRE(kill(pid, signal_number) == 0);
            signal_sent = true;
        }
    }
    close(out_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        REQUIRE(errno == EINTR);
    run.signaled = WIFSIGNALED(status);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream err_file(err_path);
    std::ostringstream err;
    err << err_file.rdbuf();
    run.err = err.str();
    CHECK(signal_sent);
    return run;
}

// Prints "ready" once its trap is set, then waits (in short sleeps, so the trap runs promptly).
std::string trap_script(const std::string& signal_name, int exit_code)
{
    return "trap 'echo caught " + signal_name + "; exit " + std::to_string(exit_code) + "' " + signal_name
        + "; echo ready; while :; do sleep 0.05; done";
}

} // namespace

TEST_CASE("record forwards signals sent to it to the command", "[cli][record][signal]")
{
    const auto dir = cli_test::scratch_dir("record_signal_forwarding");
    struct Case {
        const char* name;
        int number;
        int exit_code;
    };
    // SIGINT too: sent with kill(), it does not reach the command on its own as a terminal's Ctrl-C does.
    for (const Case& c : { Case { "TERM", SIGTERM, 42 }, Case { "INT", SIGINT, 43 }, Case { "HUP", SIGHUP, 44 },
             Case { "USR1", SIGUSR1, 45 }, Case { "USR2", SIGUSR2, 46 }, Case { "QUIT", SIGQUIT, 47 } }) {
        const auto run = signal_record_when_ready(trap_script(c.name, c.exit_code), c.number, dir);
        INFO("SIG" << c.name << ": exit code " << run.exit_code << "\nstdout:\n"
                   << run.out << "\nstderr:\n"
                   << run.err);
        CHECK_FALSE(run.signaled);
        CHECK(run.exit_code == c.exit_code);
        CHECK(run.out == std::string("ready\ncaught ") + c.name + "\n");
        CHECK(run.err
            == "fp8scope: warning: no trace was written: the command never initialized CUDA\n"); // summary still runs
    }
}

TEST_CASE("record exits 128 + N when a forwarded signal N ends the command", "[cli][record][signal]")
{
    const auto dir = cli_test::scratch_dir("record_signal_default");
    // No trap: SIGTERM's default action ends the shell (exec'd sleep loop stays in the shell, so the shell
    // itself receives it).
    const auto run = signal_record_when_ready("echo ready; while :; do sleep 0.05; done", SIGTERM, dir);
    INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
    CHECK_FALSE(run.signaled);
    CHECK(run.exit_code == 128 + SIGTERM);
}
