#include "load/trace_open_mode.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <sys/stat.h>

namespace fp8scope::analyzer::detail {

namespace {

// Anything under that name (a dangling symlink too); a name that cannot be checked counts as there.
bool exists(const std::string& path)
{
    struct stat info { };
    return ::lstat(path.c_str(), &info) == 0 || errno != ENOENT;
}

} // namespace

WalState wal_state(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    char header[20] = {};
    if (!in.read(header, sizeof header))
        return WalState::None;
    constexpr std::string_view kMagic("SQLite format 3\0", 16);
    if (std::string_view(header, kMagic.size()) != kMagic || header[18] != 2)
        return WalState::None;
    if (!exists(path + "-wal"))
        return WalState::Closed;
    return exists(path + "-shm") ? WalState::Shared : WalState::Orphaned;
}

std::string_view uri_query(WalState state)
{
    switch (state) {
    case WalState::Closed:
        return "immutable=1";
    case WalState::Orphaned:
        return "vfs=unix-none";
    case WalState::Shared:
        return "readonly_shm=1";
    case WalState::None:
        break;
    }
    return {};
}

std::string file_uri(const std::string& path, std::string_view query)
{
    std::string encoded;
    for (const char c : path) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/'
            || c == '.' || c == '_' || c == '-' || c == '~';
        if (plain)
            encoded += c;
        else
            encoded += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
    if (encoded.starts_with("//"))
        encoded.replace(0, 1, "%2F");
    return "file:" + encoded + "?" + std::string(query);
}

} // namespace fp8scope::analyzer::detail
