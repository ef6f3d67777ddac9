// `fp8scope info` on good traces: the figures a user reads must be those of the scenario that was written.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <sstream>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using Facts = SmallScenarioFacts;

namespace {

// The value of the text output's line "  <label>   <value>" (labels and row names are followed by at least one
// space), or nullopt when no line has that label.
std::optional<std::string> field(const std::string& text, const std::string& label)
{
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("  " + label + " "))
            continue;
        const auto value = line.find_first_not_of(' ', 2 + label.size());
        return value == std::string::npos ? std::string() : line.substr(value);
    }
    return std::nullopt;
}

bool has_line(const std::string& text, const std::string& line)
{
    return text.starts_with(line + "\n") || text.find("\n" + line + "\n") != std::string::npos;
}

nlohmann::json parse_json(const testing::ProcessResult& result)
{
    INFO("stdout:\n" << result.out << "\nstderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    REQUIRE(result.err.empty());
    REQUIRE(nlohmann::json::accept(result.out));
    return nlohmann::json::parse(result.out);
}

} // namespace

TEST_CASE("info prints a finished trace's origin, process, GPU, time span and rows as text", "[cli][info]")
{
    const auto path = scratch_dir("info_text") + "/good.sqlite";
    write_small_trace(path);

    const auto result = run_fp8scope({ "info", path });
    INFO("stdout:\n" << result.out << "\nstderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.empty());
    // Not a terminal: no escape sequences.
    CHECK(result.out.find('\x1b') == std::string::npos);
    CHECK(field(result.out, "format") == "fp8scope trace, schema 1.7");
    CHECK(field(result.out, "producer") == "scenario builder");
    CHECK(field(result.out, "status") == "finished (exit)");
    CHECK(result.out.find("unfinished") == std::string::npos);
    CHECK(field(result.out, "command line") == Facts::kCommandLine);
    CHECK(field(result.out, "host") == Facts::kHost);
    CHECK(field(result.out, "rank") == "0 of 1");
    CHECK(has_line(result.out, "  [0] NVIDIA H100 80GB HBM3  132 SMs  79.6 GiB  compute 9.0"));
    CHECK(field(result.out, "session start") == "2026-11-21T00:00:00.000000000Z");
    CHECK(field(result.out, "first activity") == "1.000 us after session start");
    CHECK(field(result.out, "last activity") == "71.000 us after session start");
    CHECK(field(result.out, "duration") == "70.000 us");
    CHECK(field(result.out, "FP8SCOPE_KERNEL") == "3");
    CHECK(field(result.out, "CUPTI_ACTIVITY_KIND_RUNTIME") == "4");
    CHECK(field(result.out, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == "1");
    CHECK(field(result.out, "dropped records") == "0");
    CHECK(field(result.out, "tensor samples skipped by cap") == "0");
}

TEST_CASE("info writes the CUDA and CUPTI versions of a real trace as versions", "[cli][info]")
{
    // Recorded on the H100 with CUDA 13.0 Update 1's CUPTI (CUPTI_API_VERSION 130001, xxyyzz since CUDA 13).
    const std::string out
        = run_fp8scope_ok({ "info", std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/h100-train-fp8.sqlite" });
    CHECK(field(out, "CUPTI API") == "13.0.1 (130001)");
    CHECK(field(out, "CUDA runtime") == "13.0");
}

TEST_CASE("info --format json prints the documented, versioned object", "[cli][info]")
{
    const auto path = scratch_dir("info_json") + "/good.sqlite";
    write_small_trace(path);

    const auto json = parse_json(run_fp8scope({ "info", path, "--format", "json" }));
    CHECK(json.at("fp8scope_info_version") == 1);
    CHECK(json.at("path") == path);
    CHECK(json.at("source") == "fp8scope");
    CHECK(json.at("schema").at("major") == 1);
    CHECK(json.at("schema").at("minor") == 7);
    CHECK(json.at("producer").get<std::string>().find("scenario builder") != std::string::npos);
    CHECK(json.at("finished") == true);
    CHECK(json.at("process").at("command_line") == Facts::kCommandLine);
    CHECK(json.at("process").at("host") == Facts::kHost);
    CHECK(json.at("process").at("pid") == 4242);
    CHECK(json.at("process").at("rank") == 0);
    CHECK(json.at("process").at("world_size") == 1);
    CHECK(json.at("session_start").at("utc") == "2026-11-21T00:00:00.000000000Z");
    CHECK(json.at("meta").at("host") == Facts::kHost);
    CHECK(json.at("meta").at("finished") == "1");

    REQUIRE(json.at("gpus").size() == 1);
    const auto& gpu = json.at("gpus").at(0);
    CHECK(gpu.at("id") == 0);
    CHECK(gpu.at("name") == Facts::kGpuName);
    CHECK(gpu.at("sm_count") == Facts::kSmCount);
    CHECK(gpu.at("total_memory_bytes") == Facts::kTotalMemoryBytes);
    CHECK(gpu.at("compute_capability").at("major") == 9);
    CHECK(gpu.at("compute_capability").at("minor") == 0);

    CHECK(json.at("time_span_ns").at("first") == Facts::kFirstNs);
    CHECK(json.at("time_span_ns").at("last") == Facts::kLastNs);
    CHECK(json.at("time_span_ns").at("duration") == Facts::kLastNs - Facts::kFirstNs);
    CHECK(json.at("row_counts").at("FP8SCOPE_KERNEL") == Facts::kKernels);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_RUNTIME") == Facts::kApiCalls);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == Facts::kSyncs);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_MEMCPY") == 0);
    CHECK(json.at("dropped_records") == 0);
    CHECK(json.at("tensor_stats_skipped") == 0);
}

TEST_CASE("info shows tensor samples skipped by the cap apart from dropped records", "[cli][info]")
{
    const auto path = scratch_dir("info_skipped") + "/skipped.sqlite";
    auto scenario = small_scenario();
    scenario.dropped(
        { .timestamp_ns = 1'000, .source = schema::DropSource::TensorStatsLost, .count = 3, .device_id = 0 });
    scenario.tensor_stats_skipped(120);
    REQUIRE(scenario.write_fp8scope(path));

    const auto text = run_fp8scope({ "info", path });
    INFO("stdout:\n" << text.out << "\nstderr:\n" << text.err);
    REQUIRE(text.exit_code == 0);
    CHECK(field(text.out, "dropped records") == "3");
    CHECK(field(text.out, "tensor samples skipped by cap") == "120");

    const auto json = parse_json(run_fp8scope({ "info", path, "--format", "json" }));
    CHECK(json.at("dropped_records") == 3);
    CHECK(json.at("tensor_stats_skipped") == 120);
    CHECK(json.at("meta").at("tensor_stats_skipped") == "120");
}

TEST_CASE("info says a trace is unfinished when its recording process never closed it", "[cli][info]")
{
    const auto path = scratch_dir("info_unfinished") + "/crashed.sqlite";
    write_small_trace(path, /*finished=*/false);

    const auto text = run_fp8scope({ "info", path });
    INFO("stdout:\n" << text.out << "\nstderr:\n" << text.err);
    REQUIRE(text.exit_code == 0);
    CHECK(field(text.out, "status")
        == "unfinished: the recording process did not close the trace (crash or SIGKILL); data up to the last "
           "commit is present");
    // Data up to the last commit is still shown.
    CHECK(field(text.out, "FP8SCOPE_KERNEL") == "3");

    const auto json = parse_json(run_fp8scope({ "info", path, "--format", "json" }));
    CHECK(json.at("finished") == false);
    CHECK(json.at("row_counts").at("FP8SCOPE_KERNEL") == Facts::kKernels);
}

TEST_CASE("info reads an Nsight Systems SQLite export", "[cli][info][nsight]")
{
    const auto path = scratch_dir("info_nsight") + "/report.sqlite";
    const auto written = small_scenario().write_nsight(path);
    INFO((written ? std::string() : written.error().message));
    REQUIRE(written);

    const auto text = run_fp8scope({ "info", path });
    INFO("stdout:\n" << text.out << "\nstderr:\n" << text.err);
    REQUIRE(text.exit_code == 0);
    CHECK(text.err.empty());
    CHECK(field(text.out, "format").value_or("").starts_with("Nsight Systems SQLite export, schema "));
    CHECK(field(text.out, "status") == "finished");
    CHECK(field(text.out, "CUPTI_ACTIVITY_KIND_KERNEL") == "3");
    CHECK(text.out.find(Facts::kGpuName) != std::string::npos);
    CHECK_FALSE(field(text.out, "tensor samples skipped by cap")); // nsys has no such count

    const auto json = parse_json(run_fp8scope({ "info", path, "--format", "json" }));
    CHECK(json.at("source") == "nsight");
    CHECK(json.at("tensor_stats_skipped").is_null());
    CHECK(json.at("finished") == true);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_KERNEL") == Facts::kKernels);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_RUNTIME") == Facts::kApiCalls);
    REQUIRE(json.at("gpus").size() == 1);
    CHECK(json.at("gpus").at(0).at("name") == Facts::kGpuName);
    CHECK(json.at("time_span_ns").at("first") == Facts::kFirstNs);
    CHECK(json.at("time_span_ns").at("last") == Facts::kLastNs);
}
