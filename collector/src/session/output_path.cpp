#include "session/output_path.hpp"

#include <charconv>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8scope::collector {
namespace {

std::optional<int32_t> first_int_env(std::initializer_list<const char*> names)
{
    for (const char* name : names) {
        const char* text = std::getenv(name);
        if (!text || !*text)
            continue;
        int32_t value = 0;
        const std::string_view view(text);
        auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
        if (ec == std::errc() && end == view.data() + view.size() && value >= 0)
            return value;
    }
    return std::nullopt;
}

void make_parent_folders(const std::string& path)
{
    for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
        ::mkdir(path.substr(0, slash).c_str(), 0755); // EEXIST and the like surface when the file is created
}

// Anything at all under that name, a dangling symlink included (lstat, not stat).
bool name_taken(const std::string& path)
{
    struct stat st { };
    return ::lstat(path.c_str(), &st) == 0;
}

} // namespace

std::string expand_output_pattern(std::string_view pattern, const OutputNameInputs& inputs, int counter)
{
    std::string out;
    bool used_counter = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != '%' || i + 1 == pattern.size()) {
            out += c;
            continue;
        }
        switch (pattern[++i]) {
        case 'h':
            out += inputs.host;
            break;
        case 'p':
            out += std::to_string(inputs.pid);
            break;
        case 'r':
            if (const auto rank = inputs.rank ? inputs.rank : inputs.local_rank)
                out += std::to_string(*rank);
            else
                out += kNoRankText;
            break;
        case 'n':
            out += std::to_string(counter);
            used_counter = true;
            break;
        case '%':
            out += '%';
            break;
        default: // unknown: kept as written, so a typo shows in the file name instead of vanishing
            out += '%';
            out += pattern[i];
            break;
        }
    }
    if (!used_counter && counter > 0) {
        std::string suffix(1, '-'); // built by appending: GCC 12 warns falsely (-Wrestrict) on "-" + string
        suffix += std::to_string(counter);
        const auto slash = out.rfind('/');
        const auto dot = out.rfind('.');
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1))
            out.insert(dot, suffix);
        else
            out += suffix;
    }
    return out;
}

Expected<std::unique_ptr<TraceDb>> create_trace_file(std::string_view pattern, const OutputNameInputs& inputs,
    const SessionInfo& info, std::string& path, const TraceDbOptions& options)
{
    constexpr int kAttempts = 1000;
    for (int counter = 0; counter < kAttempts; ++counter) {
        path = expand_output_pattern(pattern, inputs, counter);
        if (counter == 0)
            make_parent_folders(path);
        if (name_taken(path))
            continue;
        // O_EXCL|O_NOFOLLOW inside: a file or symlink planted since the check fails there, and is skipped too.
        auto db = TraceDb::create(path, info, options);
        if (db || !name_taken(path))
            return db;
    }
    return make_error(ErrorCode::Io, path + ": no free file name after " + std::to_string(kAttempts) + " attempts");
}

std::optional<int32_t> rank_from_environment()
{
    return first_int_env({ "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID" });
}

std::optional<int32_t> local_rank_from_environment()
{
    return first_int_env({ "LOCAL_RANK" });
}

std::optional<int32_t> world_size_from_environment()
{
    return first_int_env({ "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS" });
}

} // namespace fp8scope::collector
