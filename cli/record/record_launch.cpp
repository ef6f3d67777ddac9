#include "record/record_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// Set by cli/record/CMakeLists.txt: whether this build made libfp8scope.so.
#ifndef FP8SCOPE_COLLECTOR_BUILT
#define FP8SCOPE_COLLECTOR_BUILT 1
#endif

namespace fp8scope::cli {

namespace {

constexpr std::string_view kLibraryFileName = "libfp8scope.so";

// Signals that ask a job to stop or act (SIGUSR1/2: e.g. checkpoint requests of cluster schedulers).
constexpr std::array kForwardedSignals = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

// The command's pid while it runs; 0 before and after, so that a late signal never reaches a reused pid.
// pid_t and sig_atomic_t are both int on Linux.
volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int signal_number, siginfo_t* info, void*)
{
    const pid_t child = g_child_pid;
    if (child <= 0)
        return;
    // A signal the kernel generated (si_code > 0: SI_KERNEL) comes from the terminal: Ctrl-C, Ctrl-\ or a
    // hangup, which the kernel sends to the whole foreground process group, the command included. Forwarding it
    // would deliver it twice. Likewise a signal the command sent to its own group has reached it already.
    if (info->si_code > 0 || info->si_pid == child)
        return;
    const int saved_errno = errno;
    kill(child, signal_number);
    errno = saved_errno;
}

struct SavedSignals {
    std::array<struct sigaction, kForwardedSignals.size()> actions {};
    struct sigaction child_exit { }; // SIGCHLD
    sigset_t mask {};
};

// Blocks the forwarded signals (they stay pending until the child's pid is known) and installs the forwarding
// handler for each one that is not ignored: a signal the caller ignores (nohup, a background job of a
// non-interactive shell) stays ignored for record and, through exec, for the command, as a shell would have it.
SavedSignals install_forwarding()
{
    SavedSignals saved;
    sigset_t block;
    sigemptyset(&block);
    for (int signal_number : kForwardedSignals)
        sigaddset(&block, signal_number);
    sigprocmask(SIG_BLOCK, &block, &saved.mask);
    for (size_t i = 0; i < kForwardedSignals.size(); ++i) {
        sigaction(kForwardedSignals[i], nullptr, &saved.actions[i]);
        if (saved.actions[i].sa_handler == SIG_IGN)
            continue;
        struct sigaction action { };
        action.sa_sigaction = forward_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(kForwardedSignals[i], &action, nullptr);
    }
    // With SIGCHLD ignored (or SA_NOCLDWAIT), as a caller may leave it, the kernel reaps the child itself and
    // waitpid() could not report its exit code. Record needs the default; the command gets the caller's.
    struct sigaction default_action { };
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGCHLD, &default_action, &saved.child_exit);
    return saved;
}

void restore_signals(const SavedSignals& saved)
{
    for (size_t i = 0; i < kForwardedSignals.size(); ++i)
        sigaction(kForwardedSignals[i], &saved.actions[i], nullptr);
    sigaction(SIGCHLD, &saved.child_exit, nullptr);
    sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// In the child between fork and exec: only async-signal-safe calls. If exec fails, its errno goes to the parent
// through the close-on-exec pipe, which a successful exec closes without a write.
[[noreturn]] void exec_child(const SavedSignals& saved, char* const* argv, int error_fd)
{
    restore_signals(saved);
    execvp(argv[0], argv);
    const int exec_errno = errno;
    [[maybe_unused]] const ssize_t written = write(error_fd, &exec_errno, sizeof exec_errno);
    _exit(127);
}

// What the parent reads from the pipe: the exec errno, or 0 when exec succeeded (the pipe closed empty).
int read_exec_errno(int fd)
{
    int exec_errno = 0;
    ssize_t n = 0;
    do {
        n = read(fd, &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            print_to_stderr(fmt::format("fp8scope: error: waiting for the command: {}\n", std::strerror(errno)));
            return 1;
        }
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status); // the shell's convention: 143 for SIGTERM, 137 for SIGKILL
    return WEXITSTATUS(status);
}

bool is_regular_file(const std::string& path)
{
    struct stat file { };
    return stat(path.c_str(), &file) == 0 && S_ISREG(file.st_mode);
}

} // namespace

std::string collector_missing_message(bool collector_built, const std::string& library, bool from_environment)
{
    if (!collector_built && !from_environment)
        return fmt::format("collector library not found: {}: this fp8scope was built without the collector "
                           "(FP8SCOPE_BUILD_COLLECTOR off, its default when the build is configured without a CUDA "
                           "toolkit with CUPTI): install the CUDA toolkit and configure again with "
                           "-DFP8SCOPE_BUILD_COLLECTOR=ON, or set FP8SCOPE_LIBRARY to a libfp8scope.so built elsewhere",
            library);
    return fmt::format("collector library not found: {} (set FP8SCOPE_LIBRARY)", library);
}

Expected<std::string> locate_collector_library()
{
    namespace fs = std::filesystem;
    std::error_code error;
    fs::path library;
    const char* configured = std::getenv("FP8SCOPE_LIBRARY");
    const bool from_environment = configured != nullptr && *configured != '\0';
    if (from_environment) {
        library = fs::absolute(configured, error);
    } else {
        const fs::path executable = fs::read_symlink("/proc/self/exe", error);
        if (error)
            return make_error(ErrorCode::Io,
                fmt::format("collector library not found: cannot locate the fp8scope executable: {} "
                            "(set FP8SCOPE_LIBRARY)",
                    error.message()));
        library = executable.parent_path().parent_path() / "lib" / kLibraryFileName;
    }
    library = library.lexically_normal();
    if (error || !is_regular_file(library.string()))
        return make_error(ErrorCode::Io,
            collector_missing_message(FP8SCOPE_COLLECTOR_BUILT != 0, library.string(), from_environment));
    return library.string();
}

std::string locate_python_package()
{
    namespace fs = std::filesystem;
    std::error_code error;
    fs::path directory;
    if (const char* configured = std::getenv("FP8SCOPE_PYTHON"); configured != nullptr && *configured != '\0') {
        directory = fs::absolute(configured, error);
    } else {
        const fs::path executable = fs::read_symlink("/proc/self/exe", error);
        if (error)
            return {};
        directory = executable.parent_path().parent_path() / "share" / "fp8scope" / "python";
    }
    directory = directory.lexically_normal();
    if (error || !fs::is_regular_file(directory / "fp8scope" / "_boot" / "sitecustomize.py", error))
        return {};
    return directory.string();
}

std::string prepend_python_path(std::string_view existing, const std::vector<std::string>& entries)
{
    std::vector<std::string_view> kept;
    size_t at = 0;
    while (at <= existing.size() && !existing.empty()) {
        const size_t end = std::min(existing.find(':', at), existing.size());
        const std::string_view entry = existing.substr(at, end - at);
        if (std::find(entries.begin(), entries.end(), entry) == entries.end())
            kept.push_back(entry);
        at = end + 1;
    }
    std::string out;
    for (const std::string& entry : entries)
        out.append(out.empty() ? "" : ":").append(entry);
    for (std::string_view entry : kept)
        out.append(":").append(entry);
    return out;
}

std::string prepend_preload(std::string_view existing, const std::string& library)
{
    size_t at = 0;
    while (at < existing.size()) {
        const size_t end = std::min(existing.find_first_of(": ", at), existing.size());
        if (existing.substr(at, end - at) == library)
            return std::string(existing);
        at = end + 1;
    }
    if (existing.find_first_not_of(": ") == std::string_view::npos)
        return library;
    return fmt::format("{}:{}", library, existing);
}

void print_to_stderr(std::string_view text)
{
    // fwrite, not fmt::print: a closed stderr must not throw and turn the command's exit code into record's.
    if (std::fwrite(text.data(), 1, text.size(), stderr) == text.size())
        std::fflush(stderr);
}

void set_environment(const char* name, const std::string& value)
{
    if (setenv(name, value.c_str(), 1) != 0)
        print_to_stderr(fmt::format(
            "fp8scope: warning: cannot set {}: {} (the command may run untraced)\n", name, std::strerror(errno)));
}

CommandOutcome run_command(const std::vector<std::string>& command)
{
    std::vector<char*> argv;
    for (const auto& arg : command)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);

    int error_pipe[2];
    if (pipe2(error_pipe, O_CLOEXEC) != 0) {
        print_to_stderr(fmt::format("fp8scope: error: cannot run '{}': pipe: {}\n", command[0], std::strerror(errno)));
        return { .started = false, .exit_code = 126 };
    }
    // Buffered output would otherwise be written twice if the child had to flush it.
    std::fflush(stdout);
    std::fflush(stderr);

    const SavedSignals saved = install_forwarding();
    const pid_t pid = fork();
    if (pid == 0) {
        close(error_pipe[0]);
        exec_child(saved, argv.data(), error_pipe[1]);
    }
    close(error_pipe[1]);
    if (pid < 0) {
        const int fork_errno = errno;
        close(error_pipe[0]);
        restore_signals(saved);
        print_to_stderr(
            fmt::format("fp8scope: error: cannot run '{}': fork: {}\n", command[0], std::strerror(fork_errno)));
        return { .started = false, .exit_code = 126 };
    }
    g_child_pid = pid;
    // Signals that arrived since install_forwarding() were held pending; unblocking delivers (forwards) them now.
    sigset_t unblock;
    sigemptyset(&unblock);
    for (int signal_number : kForwardedSignals)
        sigaddset(&unblock, signal_number);
    sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    // Only record ignores SIGPIPE (the child already has the caller's disposition): its summary on a closed
    // stderr must not turn the command's exit code into 141.
    std::signal(SIGPIPE, SIG_IGN);

    const int exec_errno = read_exec_errno(error_pipe[0]);
    close(error_pipe[0]);
    const int exit_code = wait_for(pid);
    g_child_pid = 0;
    // From here on, a Ctrl-C or SIGTERM stops record itself (e.g. while it loads a large trace for the summary).
    restore_signals(saved);

    if (exec_errno == 0)
        return { .started = true, .exit_code = exit_code };
    // The shell's codes: 127 when the command does not exist, 126 when it exists but cannot be executed.
    const int code = exec_errno == ENOENT ? 127 : 126;
    if (exec_errno == ENOENT && command[0].find('/') == std::string::npos)
        print_to_stderr(fmt::format("fp8scope: error: command not found: {}\n", command[0])); // searched in PATH
    else
        print_to_stderr(
            fmt::format("fp8scope: error: cannot execute '{}': {}\n", command[0], std::strerror(exec_errno)));
    return { .started = false, .exit_code = code };
}

} // namespace fp8scope::cli
