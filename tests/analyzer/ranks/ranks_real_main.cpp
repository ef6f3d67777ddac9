// Catch2 main for the real 2-rank traces (ranks_real_test.cpp): skipped (exit 77) while samples/traces/ranks/ is
// absent; tests/gpu/check_ranks.py records them on a 2-GPU machine.
#define CATCH_CONFIG_RUNNER
#include "catch_skip_main.hpp"

#include <filesystem>
#include <optional>
#include <string>

int main(int argc, char** argv)
{
    return fp8scope::testing::run_or_skip(argc, argv, "fp8scope_ranks_real_tests", []() -> std::optional<std::string> {
        const std::string dir = std::string(FP8SCOPE_SAMPLE_TRACES) + "/ranks";
        if (std::filesystem::is_directory(dir))
            return std::nullopt;
        return dir + " is absent (recorded on 2 GPUs by tests/gpu/check_ranks.py)";
    });
}
