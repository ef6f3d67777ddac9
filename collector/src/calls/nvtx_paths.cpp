#include "calls/nvtx_paths.hpp"

#include <cstdint>
#include <cstring>

namespace fp8scope::collector {
namespace {

constexpr size_t kPathBytes = 1024;
constexpr size_t kMaxDepth = 64;

// Per thread: the path text and where each level starts. Levels deeper than kMaxDepth are counted but not
// stored, so pops stay balanced.
struct ThreadPath {
    char text[kPathBytes] = {};
    uint32_t length = 0;
    uint32_t level_start[kMaxDepth] = {};
    uint32_t depth = 0;
};
thread_local ThreadPath t_path;

} // namespace

void nvtx_path_push(std::string_view name)
{
    ThreadPath& p = t_path;
    if (p.depth < kMaxDepth) {
        p.level_start[p.depth] = p.length;
        size_t at = p.length;
        if (at > 0 && at + 1 < kPathBytes)
            p.text[at++] = '/';
        const size_t room = at < kPathBytes ? kPathBytes - 1 - at : 0;
        const size_t n = name.size() < room ? name.size() : room;
        std::memcpy(p.text + at, name.data(), n);
        p.length = static_cast<uint32_t>(at + n);
        p.text[p.length] = '\0';
    }
    ++p.depth;
}

void nvtx_path_pop()
{
    ThreadPath& p = t_path;
    if (p.depth == 0)
        return; // an unbalanced pop: NVTX itself ignores it
    --p.depth;
    if (p.depth < kMaxDepth) {
        p.length = p.level_start[p.depth];
        p.text[p.length] = '\0';
    }
}

std::string_view current_nvtx_path()
{
    return std::string_view(t_path.text, t_path.length);
}

int nvtx_path_depth()
{
    return static_cast<int>(t_path.depth);
}

} // namespace fp8scope::collector
