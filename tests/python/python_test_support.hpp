// Running package_scenarios.py for the Python package tests: python3 as a child process with a clean environment
// plus the variables a test gives, the scenario's printed observations, and the fake collector's call log.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fp8scope::testing {

// The stand-in libfp8scope.so (fake_collector.c).
inline const std::string kFakeCollector = FP8SCOPE_FAKE_COLLECTOR;

struct ScenarioRun {
    std::map<std::string, std::string> values; // the scenario's `key=value` lines
    std::vector<std::string> warnings; // its `warning: ...` lines, without the prefix
    std::vector<std::string> calls; // the fake collector's log, one line per C API call
    bool log_written = false; // false: no C API function was ever called
};

// Runs `scenario` under `env -i` plus `env_extra` ("NAME=value"), so nothing from the test's own environment (an
// LD_PRELOAD, a CUDA_INJECTION64_PATH) leaks in. REQUIREs exit code 0, an empty stderr, and that importing the
// package did not import torch.
ScenarioRun run_scenario(const std::string& scenario, const std::vector<std::string>& env_extra = {});

size_t warnings_containing(const ScenarioRun& run, const std::string& needle);

// A fake collector log line for fp8scope_probe with the given fields, whose struct_size was right.
std::string probe_line(const std::string& fields);

} // namespace fp8scope::testing
