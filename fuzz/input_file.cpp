// InputFile and split_two(): how a fuzz input reaches the loader, which reads files.
#include "fuzz_support.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8scope::fuzz {

namespace {

std::string scratch_dir()
{
    struct stat info { };
    if (::stat("/dev/shm", &info) == 0 && S_ISDIR(info.st_mode) && ::access("/dev/shm", W_OK) == 0)
        return "/dev/shm";
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

} // namespace

void fail(std::string_view what)
{
    std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

InputFile::InputFile(std::string_view tag)
    : path_(scratch_dir() + "/fp8scope-fuzz-" + std::string(tag) + "-" + std::to_string(::getpid()) + ".sqlite")
{
}

InputFile::~InputFile()
{
    clear();
}

const std::string& InputFile::clear() const
{
    // The loader opens read-only and never writes the side files, but one left by a writer (fuzz_rows) or an earlier
    // process with the same pid would change how SQLite reads the file (a -wal file is replayed).
    for (const char* suffix : { "", "-wal", "-shm", "-journal" })
        ::unlink((path_ + suffix).c_str());
    return path_;
}

const std::string& InputFile::write(std::span<const uint8_t> bytes)
{
    clear();
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail("cannot create the input file " + path_ + ": " + std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
            ::close(fd);
            fail("cannot write the input file " + path_);
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    return path_;
}

std::pair<std::span<const uint8_t>, std::span<const uint8_t>> split_two(std::span<const uint8_t> input)
{
    if (input.size() < 4)
        return { {}, {} };
    const uint32_t prefix = uint32_t { input[0] } | uint32_t { input[1] } << 8 | uint32_t { input[2] } << 16
        | uint32_t { input[3] } << 24;
    const auto rest = input.subspan(4);
    const size_t first = prefix % (rest.size() + 1);
    return { rest.first(first), rest.subspan(first) };
}

} // namespace fp8scope::fuzz
