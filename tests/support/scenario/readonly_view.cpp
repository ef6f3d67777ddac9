#include "readonly_view.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <sched.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fp8scope::testing {
namespace {

namespace fs = std::filesystem;

// The unprivileged ids of Debian's `nobody`.
constexpr uid_t kNobodyUid = 65534;
constexpr gid_t kNobodyGid = 65534;

std::string failed(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

bool write_proc_file(const std::string& path, const std::string& text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// In the child: a mount namespace of its own (inside a user namespace when plain unshare is not permitted), with /
// private so that nothing mounted in it shows outside. "" on success, else why not.
std::string private_mount_namespace()
{
    if (::unshare(CLONE_NEWNS) != 0) {
        const uid_t uid = ::geteuid();
        const gid_t gid = ::getegid();
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return failed("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
        if (!write_proc_file("/proc/self/setgroups", "deny")
            || !write_proc_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1")
            || !write_proc_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
            return failed("writing the user namespace's id maps");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return failed("making / private");
    return {};
}

// In the child: `dir` bind-mounted over itself and remounted read-only, in a mount namespace of its own.
std::string mount_read_only(const std::string& dir)
{
    if (std::string problem = private_mount_namespace(); !problem.empty())
        return problem;
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
        return failed("bind-mounting " + dir);
    if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
        return failed("remounting " + dir + " read-only");
    return {};
}

std::string drop_root()
{
    if (::geteuid() != 0)
        return {};
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobodyGid) != 0 || ::setuid(kNobodyUid) != 0)
        return failed("dropping to uid/gid 65534");
    return {};
}

// The view must really be read-only: a file cannot be created in `dir`.
std::string check_unwritable(const std::string& dir)
{
    const std::string probe = dir + "/.write-probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return {};
    ::close(fd);
    ::unlink(probe.c_str());
    return "the directory is still writable";
}

void set_modes(const std::string& dir, bool writable)
{
    for (const auto& entry : fs::directory_iterator(dir))
        ::chmod(entry.path().c_str(), writable ? 0644 : 0444);
    ::chmod(dir.c_str(), writable ? 0755 : 0555);
}

void write_all(int fd, const std::string& text)
{
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0)
            return;
        done += static_cast<size_t>(n);
    }
}

// In the child: a tmpfs of `bytes` mounted on `dir`, in a mount namespace of its own.
std::string mount_small_tmpfs(const std::string& dir, int64_t bytes)
{
    if (std::string problem = private_mount_namespace(); !problem.empty())
        return problem;
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
        return failed("mounting a tmpfs of " + std::to_string(bytes) + " bytes on " + dir);
    return {};
}

// Forks; the child runs `set_up`, then `work` if that succeeded, and reports through a pipe.
ChildReport run_in_child(const std::function<std::string()>& set_up, const std::function<std::string()>& work,
    const std::function<void()>& after = {})
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return { false, failed("pipe") };
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const std::string problem = set_up();
        // First byte: 'S' set up, 'N' not.
        write_all(fds[1], problem.empty() ? "S" + work() : "N" + problem);
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    if (pid > 0)
        ::waitpid(pid, &status, 0);
    if (after)
        after();
    if (pid < 0)
        return { false, failed("fork") };
    if (text.empty() || !WIFEXITED(status))
        return { true, "the child ended without a report (status " + std::to_string(status) + ")" };
    return { text[0] == 'S', text.substr(1) };
}

} // namespace

ChildReport read_in_child(const std::string& dir, ReadOnlyView view, const std::function<std::string()>& read)
{
    if (view == ReadOnlyView::Permissions)
        set_modes(dir, false);
    const auto set_up = [&] {
        std::string problem = view == ReadOnlyView::Mount ? mount_read_only(dir) : drop_root();
        return problem.empty() ? check_unwritable(dir) : problem;
    };
    return run_in_child(set_up, read, [&] {
        if (view == ReadOnlyView::Permissions)
            set_modes(dir, true);
    });
}

ChildReport run_on_small_tmpfs(const std::string& dir, int64_t bytes, const std::function<std::string()>& work)
{
    return run_in_child([&] { return mount_small_tmpfs(dir, bytes); }, work);
}

std::map<std::string, std::string> directory_snapshot(const std::string& dir)
{
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::ostringstream bytes;
        bytes << std::ifstream(entry.path(), std::ios::binary).rdbuf();
        files[entry.path().filename().string()] = bytes.str();
    }
    return files;
}

void skip_test(const std::string& reason)
{
    std::fprintf(stderr, "SKIPPED: %s\n", reason.c_str());
    std::fflush(nullptr);
    std::_Exit(77);
}

} // namespace fp8scope::testing
