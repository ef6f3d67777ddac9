// Shared by the step and bubble tests (header-only, so that the test target's source list stays as it is): a
// scenario written through the real writer (or in the Nsight Systems layout) and loaded back, and the recorded
// sample traces.
#pragma once

#include <unistd.h>

#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "scenario.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

namespace fp8scope::testing {

enum class Layout { Fp8scope, Nsight };

// Writes `scenario` under FP8SCOPE_TEST_TMP/steps-bubbles/<name>.sqlite and loads it; REQUIREs both to succeed.
inline analyzer::TraceModel write_and_load(
    const Scenario& scenario, const std::string& name, Layout layout = Layout::Fp8scope)
{
    const std::filesystem::path dir = std::filesystem::path(FP8SCOPE_TEST_TMP) / "steps-bubbles";
    std::filesystem::create_directories(dir);
    // The pid keeps test cases that build the same scenario apart: CTest runs each case as its own process, in
    // parallel, and two of them rewriting one file would read each other's half-written trace.
    const std::string path
        = (dir / (name + (layout == Layout::Nsight ? "-nsys" : "") + "-" + std::to_string(::getpid()) + ".sqlite"))
              .string();
    std::filesystem::remove(path);
    const auto written = layout == Layout::Nsight ? scenario.write_nsight(path) : scenario.write_fp8scope(path);
    INFO(path);
    REQUIRE(written.has_value());
    auto model = analyzer::load_trace(path);
    REQUIRE(model.has_value());
    return std::move(*model);
}

// samples/traces/<file>; REQUIREs it to load.
inline analyzer::TraceModel load_recorded(const std::string& file)
{
    const std::string path = std::string(FP8SCOPE_SAMPLE_TRACES) + "/" + file;
    auto model = analyzer::load_trace(path);
    INFO(path);
    REQUIRE(model.has_value());
    return std::move(*model);
}

} // namespace fp8scope::testing
