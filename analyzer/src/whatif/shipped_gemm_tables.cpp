// The GEMM tables shipped with fp8scope (fp8_whatif.hpp): calibrate's files, data/gemm_tables/ in the source tree,
// found at run time beside the program and read once per process.
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

namespace fp8scope::analyzer {

Expected<std::filesystem::path> shipped_gemm_table_dir()
{
    std::error_code error;
    if (const char* dir = std::getenv(kDataDirVariable); dir != nullptr && *dir != '\0') {
        // Absolute, so that an error names the file wherever the program runs (a relative value stays as it is when
        // the working directory is gone).
        const std::filesystem::path absolute = std::filesystem::absolute(dir, error);
        return (error ? std::filesystem::path(dir) : absolute).lexically_normal() / "gemm_tables";
    }
    // The program's own file, not argv[0] or the working directory: a link to the program, or a program run from
    // elsewhere, still finds the share/ folder installed with it.
    const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error)
        return make_error(ErrorCode::Unavailable,
            fmt::format("the shipped GEMM tables: cannot find the running program to look beside it (/proc/self/exe: "
                        "{})",
                error.message()));
    return program.parent_path().parent_path() / "share" / "fp8scope" / "gemm_tables";
}

std::string_view shipped_gemm_table_file(std::string_view gpu)
{
    return gpu.find("H200") != std::string_view::npos ? "h200.json" : "h100.json";
}

Expected<const GemmTable*> shipped_gemm_table(std::string_view gpu)
{
    const Expected<std::filesystem::path> dir = shipped_gemm_table_dir();
    if (!dir)
        return std::unexpected(dir.error());
    const std::string path = (*dir / shipped_gemm_table_file(gpu)).string();
    // Every analysis of the process (the viewer's background loads, a CLI over many traces) shares one read of each
    // file; a file that cannot be read is remembered too, so its error is the same every time. Keyed by path: a
    // changed FP8SCOPE_DATA_DIR reads the files it names.
    static std::mutex mutex;
    static std::map<std::string, Expected<GemmTable>, std::less<>> tables;
    const std::scoped_lock lock(mutex);
    auto it = tables.find(path);
    if (it == tables.end()) {
        std::string why;
        std::optional<GemmTable> table = read_gemm_table_file(path, why);
        Expected<GemmTable> entry = table
            ? Expected<GemmTable>(std::move(*table))
            : make_error(ErrorCode::Io, fmt::format("the shipped GEMM table {}: {}", path, why));
        it = tables.emplace(path, std::move(entry)).first;
    }
    if (!it->second)
        return std::unexpected(it->second.error());
    return &*it->second;
}

} // namespace fp8scope::analyzer
