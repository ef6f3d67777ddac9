#include "record_test_support.hpp"

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <filesystem>
#include <gnu/libc-version.h>
#include <sstream>

namespace fp8scope::record_test {

std::vector<std::string> with_environment(
    const Environment& environment, const std::vector<std::string>& argv, const std::string& directory)
{
    std::vector<std::string> full { "/usr/bin/env" };
    if (!directory.empty()) {
        full.push_back("-C"); // coreutils env --chdir
        full.push_back(directory);
    }
    for (const auto& [name, value] : environment)
        full.push_back(name + "=" + value);
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

std::string injected_library()
{
#ifdef FP8SCOPE_COLLECTOR_LIB
    return FP8SCOPE_COLLECTOR_LIB;
#else
    // A function only the C library defines: sanitizer runtimes intercept the common ones (fputs, malloc), and
    // their library must not be preloaded into the test's programs.
    Dl_info info {};
    REQUIRE(dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &info) != 0);
    REQUIRE(info.dli_fname != nullptr);
    return std::filesystem::canonical(info.dli_fname).string();
#endif
}

testing::ProcessResult run_record(
    const std::vector<std::string>& args, const Environment& environment, const std::string& directory)
{
    Environment full { { "FP8SCOPE_LIBRARY", injected_library() } };
    full.insert(full.end(), environment.begin(), environment.end());
    std::vector<std::string> argv { FP8SCOPE_EXE, "record" };
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run_process(with_environment(full, argv, directory));
}

std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix)
{
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) {
        if (line.starts_with(prefix))
            lines.push_back(line);
    }
    return lines;
}

std::vector<std::string> directory_entries(const std::string& directory)
{
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory))
        names.push_back(entry.path().filename().string());
    return names;
}

} // namespace fp8scope::record_test
