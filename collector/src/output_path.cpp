#include "output_path.hpp"

#include <charconv>
#include <cstdlib>

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
