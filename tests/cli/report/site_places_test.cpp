// Sites a user can find (issue 28 item 7): a zero-code GEMM site says where it sits in the step, the report says how
// to get module names, and compare puts unmatched sites that share a reason on one line. On the zoo's real traces,
// whose workloads print their layer counts (tests/gpu/zoo/).
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

using namespace fp8scope::cli_test;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";

} // namespace

TEST_CASE("report places zero-code GEMM sites in the forward or backward pass and says how to name them",
    "[cli][report][places]")
{
    // whatif_tiny_fp8: 24 Fp8Linear layers without NVTX paths; its first forward GEMM saturates first.
    const std::string trace = kTraces + "zoo/whatif_tiny_fp8.sqlite";
    const std::string text = run_fp8scope_ok({ "report", trace });
    CHECK(text.find("  site names       149 zero-code GEMM sites are named by shape alone") != std::string::npos);
    CHECK(text.find("fp8scope.torch.annotate(model)") != std::string::npos);
    CHECK(text.find("gemm 256x64x256 #0 · B (forward GEMM 1 of 24 sampled)") != std::string::npos);

    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "report", trace, "--format", "json" }));
    const auto& health = json["tensor_health"];
    CHECK(health["unnamed_gemm_sites"] == 149);
    int64_t forward = 0, backward = 0;
    for (const auto& site : health["sites"]) {
        if (site["place"].is_null())
            continue;
        const std::string phase = site["place"]["phase"];
        forward += phase == "forward";
        backward += phase == "backward";
        if (phase == "forward")
            CHECK(site["place"]["of"] == 24);
        CHECK(site["place"]["text"].get<std::string>().find(" sampled") != std::string::npos);
    }
    CHECK(forward > 0);
    CHECK(backward > 0);

    // An annotated run's sites have module paths: no hint.
    const std::string annotated = run_fp8scope_ok({ "report", kTraces + "zoo/fp8_delayed_clean.sqlite" });
    CHECK(annotated.find("site names") == std::string::npos);
}

TEST_CASE("compare lists unmatched sites that share a reason on one line", "[cli][compare][places]")
{
    // The FP8 run's 24 probes (input and weight per module) have no twin in the BF16 reference.
    const std::string run = kTraces + "compare/h100-drift-fp8.sqlite", ref = kTraces + "compare/h100-drift-bf16.sqlite";
    const std::string text = run_fp8scope_ok({ "compare", run, ref });
    CHECK(
        text.find("  unmatched in the run (24):\n    24 sites (the reference has no probe of this name and role under "
                  "this path): train_step/Transformer/blocks.0/blocks.0.qkv · input, ")
        != std::string::npos);
    CHECK(text.find(" and 21 more\n\n") != std::string::npos);
    CHECK(occurrences(text, "no probe of this name and role") == 1);
    const std::string md = run_fp8scope_ok({ "compare", run, ref, "--format", "md" });
    CHECK(occurrences(md, "no probe of this name and role") == 1);
    // JSON keeps every site with its reason.
    const auto json = nlohmann::json::parse(run_fp8scope_ok({ "compare", run, ref, "--format", "json" }));
    CHECK(json["sites"]["run_unmatched"].size() == 24);
}
