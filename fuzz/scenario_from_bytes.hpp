// A valid-schema trace whose rows the fuzzer chooses: the input is read as a list of operations on the scenario
// builder (tests/support/scenario/scenario.hpp), each with its values, so that the loader's range checks and the
// analyses' logic see extreme and inconsistent values (negative and huge times, ends before starts, dangling
// correlation ids, step markers out of order, NaN statistics) in files SQLite reads without complaint.
#pragma once

#include "scenario.hpp"

#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <span>

namespace fp8scope::fuzz {

struct FuzzedTrace {
    testing::Scenario scenario;
    bool nsight = false; // write it in the Nsight Systems export layout instead of ours
    bool finished = true; // ours: meta finished
    analyzer::ReportOptions options; // warm-up, step range and device for analyze()
};

FuzzedTrace scenario_from_bytes(std::span<const uint8_t> bytes);

} // namespace fp8scope::fuzz
