// Shared by the `fp8scope record` and LD_PRELOAD tests: running programs with extra environment variables, and
// a library that record can inject without a GPU.
#pragma once

#include "subprocess.hpp"

#include <string>
#include <utility>
#include <vector>

namespace fp8scope::record_test {

using Environment = std::vector<std::pair<std::string, std::string>>;

// argv run through /usr/bin/env with `environment` added (and, with `directory`, in that working directory):
// run_process() passes the test's own environment, and this keeps the test process's environment unchanged.
std::vector<std::string> with_environment(
    const Environment& environment, const std::vector<std::string>& argv, const std::string& directory = {});

// The library record injects in these tests: the collector when it is built, otherwise the C library, which
// every program has loaded anyway, so that preloading it changes nothing. Either way no CUDA program runs
// here, so the collector stays inert.
std::string injected_library();

// `fp8scope record ARGS` with FP8SCOPE_LIBRARY set to injected_library() plus `environment`.
testing::ProcessResult run_record(
    const std::vector<std::string>& args, const Environment& environment = {}, const std::string& directory = {});

// Lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix);

// Names of the entries of `directory`.
std::vector<std::string> directory_entries(const std::string& directory);

} // namespace fp8scope::record_test
