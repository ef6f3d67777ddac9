#include "session/manifest.hpp"

#include "session/warn.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace fp8scope::collector {
namespace {

void append_failure_to_manifest(std::string reason)
{
    std::ranges::replace(reason, '\n', ' ');
    std::string line(1, '!'); // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "!" + string
    line += std::to_string(getpid());
    line += '\t';
    line += reason;
    line += '\n';
    append_line_to_manifest(line);
}

} // namespace

std::string absolute(const std::string& path)
{
    if (!path.empty() && path.front() == '/')
        return path;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return path;
    return std::string(cwd) + "/" + path;
}

void append_line_to_manifest(const std::string& line)
{
    const char* manifest = std::getenv("FP8SCOPE_MANIFEST");
    if (!manifest || !*manifest)
        return;
    const int fd = ::open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size()); // one write: atomic append
    ::close(fd);
}

void append_to_manifest(const std::string& path)
{
    append_line_to_manifest(absolute(path) + "\n");
}

void not_traced(const std::string& reason)
{
    warn(reason + " (this process is not traced)");
    append_failure_to_manifest(reason);
}

} // namespace fp8scope::collector
