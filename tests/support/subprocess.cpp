#include "subprocess.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fp8scope::testing {

namespace {

struct Pipe {
    int read_fd = -1;
    int write_fd = -1;
};

Pipe make_pipe()
{
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    return Pipe { fds[0], fds[1] };
}

} // namespace

ProcessResult run_process(const std::vector<std::string>& argv)
{
    REQUIRE(!argv.empty());
    Pipe out = make_pipe();
    Pipe err = make_pipe();

    posix_spawn_file_actions_t actions;
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    // stdin from /dev/null: a CLI that waited for input would otherwise hang the test.
    REQUIRE(posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0) == 0);
    REQUIRE(posix_spawn_file_actions_adddup2(&actions, out.write_fd, STDOUT_FILENO) == 0);
    REQUIRE(posix_spawn_file_actions_adddup2(&actions, err.write_fd, STDERR_FILENO) == 0);

    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& arg : argv)
        args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);

    pid_t pid = 0;
    const int spawn_error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out.write_fd);
    close(err.write_fd);
    if (spawn_error != 0) {
        close(out.read_fd);
        close(err.read_fd);
        FAIL("posix_spawn " << argv[0] << ": " << std::strerror(spawn_error));
    }

    ProcessResult result;
    std::array<pollfd, 2> fds { pollfd { out.read_fd, POLLIN, 0 }, pollfd { err.read_fd, POLLIN, 0 } };
    std::array<std::string*, 2> sinks { &result.out, &result.err };
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR)
                continue;
            FAIL("poll: " << std::strerror(errno));
        }
        for (size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            char buffer[4096];
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1; // poll ignores negative descriptors
                --open_fds;
            }
        }
    }

    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        REQUIRE(errno == EINTR);
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signaled = true;
        result.exit_code = 128 + WTERMSIG(status);
    }
    return result;
}

size_t line_count(const std::string& text)
{
    return static_cast<size_t>(std::ranges::count(text, '\n'));
}

} // namespace fp8scope::testing
