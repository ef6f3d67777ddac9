// The committed demo trace (samples/traces/scenario-demo.sqlite) loads, and it is what the generator writes
// today: a schema or scenario-builder change that makes it stale fails here, with the command to regenerate it.
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace fp8scope;
using namespace fp8scope::cli_test;

namespace {

const std::string kSamplePath = FP8SCOPE_SOURCE_DIR "/samples/traces/scenario-demo.sqlite";

nlohmann::json info_json(const std::string& path)
{
    const auto result = run_fp8scope({ "info", path, "--format", "json" });
    INFO("stdout:\n" << result.out << "\nstderr:\n" << result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out);
}

} // namespace

TEST_CASE("the committed demo trace loads as a finished synthetic training run", "[cli][sample]")
{
    REQUIRE(std::filesystem::exists(kSamplePath));
    // The README promises a small file.
    CHECK(std::filesystem::file_size(kSamplePath) < 200 * 1024);

    const auto json = info_json(kSamplePath);
    CHECK(json.at("finished") == true);
    CHECK(json.at("producer").get<std::string>().find("synthetic") != std::string::npos);
    // 3 steps of 4 layers: 3 forward and 3 backward kernels per layer, plus optimizer and scale update.
    CHECK(json.at("row_counts").at("FP8SCOPE_KERNEL") == 3 * (4 * 6 + 2));
    CHECK(json.at("row_counts").at("FP8SCOPE_STEP_MARKER") == 3);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_MEMCPY") == 3);
    CHECK(json.at("row_counts").at("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == 3);
    CHECK(json.at("row_counts").at("FP8SCOPE_TENSOR_STATS") == 6);
    CHECK(json.at("row_counts").at("FP8SCOPE_SCALAR") == 3);
    REQUIRE(json.at("gpus").size() == 1);
    CHECK(json.at("gpus").at(0).at("name") == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("the committed demo trace matches what fp8scope_make_sample_trace writes now", "[cli][sample]")
{
    const auto fresh = scratch_dir("sample_regenerated") + "/scenario-demo.sqlite";
    const auto made = testing::run_process({ FP8SCOPE_MAKE_SAMPLE_EXE, fresh });
    INFO(made.err);
    REQUIRE(made.exit_code == 0);

    auto committed = info_json(kSamplePath);
    auto regenerated = info_json(fresh);
    committed.erase("path");
    regenerated.erase("path");
    INFO("the committed sample is stale; regenerate it with: "
         "build/test/tests/cli/fp8scope_make_sample_trace samples/traces/scenario-demo.sqlite && "
         "xz -9e -kf samples/traces/scenario-demo.sqlite (git tracks the .xz)");
    CHECK(committed == regenerated);
}
