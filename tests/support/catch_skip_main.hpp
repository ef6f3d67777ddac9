// The Catch2 main of test binaries that need what a machine may lack (a GPU, traces recorded on one): without it every
// run exits 77, which CTest reports as skipped (SKIP_RETURN_CODE), never as passed. Listing the tests
// (catch_discover_tests does it at build time) needs nothing. Include it after `#define CATCH_CONFIG_RUNNER`.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace fp8scope::testing {

// why_skip() returns why the tests cannot run here, or nullopt when they can.
template <typename WhySkip> int run_or_skip(int argc, char** argv, const char* binary, WhySkip why_skip)
{
    Catch::Session session;
    if (const int status = session.applyCommandLine(argc, argv); status != 0)
        return status;
    const Catch::ConfigData& config = session.configData();
    const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
    if (!listing) {
        if (const std::optional<std::string> why = why_skip()) {
            std::fprintf(stderr, "%s: %s: skipped\n", binary, why->c_str());
            return 77;
        }
    }
    return session.run();
}

} // namespace fp8scope::testing
