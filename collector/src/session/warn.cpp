#include "session/warn.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace fp8scope::collector {
namespace {
void write_line(std::string_view prefix, std::string_view text)
{
    std::string line;
    line.reserve(prefix.size() + text.size() + 1);
    line.append(prefix).append(text).push_back('\n');
    const char* data = line.data();
    size_t left = line.size();
    while (left > 0) {
        const ssize_t written = ::write(STDERR_FILENO, data, left);
        if (written <= 0)
            return; // stderr closed or full: nothing better to do
        data += written;
        left -= static_cast<size_t>(written);
    }
}
} // namespace

void warn(std::string_view text)
{
    write_line("fp8scope: warning: ", text);
}

void warn_once(std::string_view key, std::string_view text)
{
    static std::mutex mutex;
    static auto* seen = new std::set<std::string, std::less<>>; // never destroyed: warnings may come during exit
    {
        std::lock_guard lock(mutex);
        if (!seen->emplace(key).second)
            return;
    }
    warn(text);
}

void inform(std::string_view text)
{
    const char* verbose = std::getenv("FP8SCOPE_VERBOSE");
    if (!verbose || verbose[0] != '1')
        return;
    write_line("fp8scope: ", text);
}

} // namespace fp8scope::collector
