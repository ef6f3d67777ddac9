// `fp8scope compare` says what the pair is before any figure (issue 45 item 1), on committed traces: the GPU, the
// job (program and the arguments beyond precision switches and run names), the model (tensor sites and kernel names
// in common) and each run's precision. The issue's own pair, an H200 FP8 run of train.py's default model against an
// H100 BF16 run of a 2-layer model, is compared by performance alone and says why; BF16 given as the run and FP8 as
// the reference is compared the right way round and says so, in compare and in check --ref.
#include "cli_test_support.hpp"
#include "xml_check.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::cli_test;
using Catch::Matchers::Contains;

namespace {

const std::string kTraces = std::string(FP8SCOPE_SOURCE_DIR) + "/samples/traces/";
const std::string kH200Fp8 = kTraces + "h200-train-fp8-stats.sqlite"; // train.py, default model, H200
const std::string kCleanFp8 = kTraces + "compare/h100-clean-fp8.sqlite"; // train.py --layers 2 ..., H100
const std::string kCleanBf16 = kTraces + "compare/h100-clean-bf16.sqlite";

nlohmann::json compare_json(const std::string& run, const std::string& ref)
{
    return nlohmann::json::parse(run_fp8scope_ok({ "compare", run, ref, "--format", "json" }));
}

} // namespace

TEST_CASE("compare names GPU, job, model and precision first, and a pair of different GPUs and jobs is compared by "
          "performance alone (issue 45)",
    "[cli][compare]")
{
    const std::string text = run_fp8scope_ok({ "compare", kH200Fp8, kCleanBf16, "--color", "never" });
    const auto lines = lines_of(text);
    REQUIRE(lines.size() > 6);
    CHECK(lines[1]
        == "GPU:       the run on NVIDIA H200, the reference on NVIDIA H100 80GB HBM3: different GPUs, so only the "
           "performance is compared, and it is the GPUs' difference as much as FP8's");
    CHECK(lines[2]
        == "Job:       'train.py' in both, with other arguments beyond precision switches and run names; only the "
           "reference has '--layers 2 --d-model 512 --heads 8 --seq 256 --batch 8 --vocab 4096': different jobs, so "
           "only the performance is compared");
    CHECK(lines[3]
        == "Model:     0 tensor sites in common (the run has 201 with samples, the reference 81); 43 kernel names in "
           "common (46 only in the run, 14 only in the reference)");
    CHECK(lines[4]
        == "Precision: the run runs FP8 (FP8 GEMM kernels in its analysed steps); the reference runs no FP8 GEMM "
           "(BF16 or another 16- or 32-bit precision)");
    // The verdict: neither drift nor loss (the loss of another model is no FP8 loss delta), and why.
    CHECK(lines[5].starts_with("Drift and loss not compared: the traces are of different jobs: their command lines "
                               "differ beyond precision switches and run names"));
    CHECK_THAT(lines[5],
        Contains("; and the runs ran on different GPUs (the run on NVIDIA H200, the reference on "
                 "NVIDIA H100 80GB HBM3); performance only"));
    CHECK(text.find("loss delta") == std::string::npos);
    // Its step change is not FP8's: no price, and why.
    CHECK_THAT(text, Contains("\nFP8's price\n  FP8's price is not split out: the traces are of different jobs"));
    CHECK(text.find("FP8's price (per step") == std::string::npos);
    CHECK(text.find("What would win it back") == std::string::npos);
    // The performance table gives plain differences, not GEMM time FP8 saved.
    CHECK_THAT(text, Contains("\n  GEMM time per step                 4.192 ms   484.800 us  +3.707 ms\n"));
    CHECK(text.find("net gain per step") == std::string::npos);

    const nlohmann::json doc = compare_json(kH200Fp8, kCleanBf16);
    const auto& pair = doc.at("pair");
    CHECK(pair.at("different_gpus") == true);
    CHECK(pair.at("different_jobs") == true);
    CHECK(pair.at("swapped") == false);
    CHECK(pair.at("run").at("gpu") == "NVIDIA H200");
    CHECK(pair.at("ref").at("gpu") == "NVIDIA H100 80GB HBM3");
    CHECK(pair.at("run").at("fp8") == true);
    CHECK(pair.at("ref").at("fp8") == false);
    CHECK(pair.at("sites_in_common") == 0);
    CHECK(pair.at("ref_only_arguments")
        == nlohmann::json::array(
            { "--layers 2", "--d-model 512", "--heads 8", "--seq 256", "--batch 8", "--vocab 4096" }));
    CHECK(pair.at("run_only_arguments").empty());
    CHECK(doc.at("numerics").at("not_compared") == pair.at("performance_only"));
    CHECK(doc.at("loss").at("final_relative_delta").is_null());
    CHECK_THAT(doc.at("performance").at("price_not_split").get<std::string>(), Contains("different GPUs"));
    // One count, one value: the kernel names in common are the kernel diff's.
    CHECK(pair.at("kernel_names_in_common") == 43);
    CHECK_THAT(text, Contains("Kernels that changed most (time per step; 43 names in both runs)"));
    // The other formats carry the same lines.
    for (const auto& line : pair.at("lines")) {
        const std::string label = line.at("label"), sentence = line.at("text");
        CHECK_THAT(text, Contains(sentence));
        CHECK_THAT(
            run_fp8scope_ok({ "compare", kH200Fp8, kCleanBf16, "--format", "md" }), Contains("- **" + label + ":** "));
    }
    const std::string html = run_fp8scope_ok({ "compare", kH200Fp8, kCleanBf16, "--format", "html" });
    CHECK_THAT(html, Contains("<li><strong>GPU:</strong> the run on NVIDIA H200"));
    const auto junit = parse_xml(run_fp8scope_ok({ "compare", kH200Fp8, kCleanBf16, "--format", "junit" }));
    REQUIRE(junit.ok);
    CHECK_THAT(run_fp8scope_ok({ "compare", kH200Fp8, kCleanBf16, "--format", "junit" }),
        Contains("<property name=\"pair_job\" value=\"&#39;train.py&#39; in both"));
    // check --ref gates on drift and loss: it refuses the pair, with the reason, never passes on it.
    const auto check = run_fp8scope({ "check", kH200Fp8, "--ref", kCleanBf16 });
    CHECK(check.exit_code == 3);
    CHECK(check.out.empty());
    CHECK(check.err.starts_with("fp8scope: error: the traces are of different jobs"));
    CHECK(testing::line_count(check.err) == 1);
}

TEST_CASE("compare and check given BF16 as the run and FP8 as the reference compare them the right way round and say "
          "so (issue 45)",
    "[cli][compare]")
{
    const nlohmann::json right = compare_json(kCleanFp8, kCleanBf16);
    const nlohmann::json given = compare_json(kCleanBf16, kCleanFp8);
    CHECK(right.at("pair").at("swapped") == false);
    CHECK(given.at("pair").at("swapped") == true);
    CHECK(given.at("run").at("path") == kCleanFp8);
    CHECK(given.at("ref").at("path") == kCleanBf16);
    // Every figure as in the right order: FP8's price with its signs as they are.
    for (const char* key : { "performance", "loss", "drift", "verdict", "alignment", "recipe" })
        CHECK(given.at(key) == right.at(key));
    CHECK(given.at("performance").at("bookkeeping_added_ns").get<double>() > 0);
    CHECK(given.at("performance").at("kernels_added_per_step").get<double>() > 0);

    const std::string text = run_fp8scope_ok({ "compare", kCleanBf16, kCleanFp8, "--color", "never" });
    const auto lines = lines_of(text);
    REQUIRE(lines.size() > 6);
    CHECK(lines[0] == "fp8scope compare: " + kCleanFp8 + " against " + kCleanBf16);
    CHECK(lines[1].starts_with("Order:     the FP8 run was given as the reference: it is compared as the run"));
    CHECK(lines[2] == "GPU:       NVIDIA H100 80GB HBM3 in both");
    CHECK(lines[3] == "Job:       'train.py' in both, the same arguments beyond precision switches and run names");
    // The sites in common are the sites compared: one count.
    CHECK(
        lines[4].starts_with("Model:     81 tensor sites in common (the run has 105 with samples, the reference 81)"));
    CHECK(given.at("sites").at("matched") == 81);
    CHECK(lines[5].starts_with("Precision: the run runs FP8 "));
    CHECK_THAT(text, Contains("  FP8 bookkeeping                 +292.566 us"));

    // check gates the FP8 run's drift and loss either way, and says when it swapped them.
    const auto in_order = run_fp8scope({ "check", kCleanFp8, "--ref", kCleanBf16 });
    const auto swapped = run_fp8scope({ "check", kCleanBf16, "--ref", kCleanFp8 });
    CHECK(in_order.exit_code == 0);
    CHECK(swapped.exit_code == 0);
    const auto swapped_lines = lines_of(swapped.out);
    REQUIRE(swapped_lines.size() == 5);
    CHECK(swapped_lines[1]
        == "  warning: the FP8 run was given as the reference: drift and loss are gated for '" + kCleanFp8
            + "' against '" + kCleanBf16 + "' (swap the arguments to silence this)");
    const auto in_order_lines = lines_of(in_order.out);
    REQUIRE(in_order_lines.size() == 4);
    CHECK(swapped_lines[2] == in_order_lines[1]);
    CHECK(swapped_lines[3] == in_order_lines[2]);
}

TEST_CASE(
    "compare tells a precision switch and a run's name from a different job in the command line", "[cli][compare]")
{
    using analyzer::command_arguments_beyond_precision;
    using Args = std::vector<std::string>;
    // A zoo pair's two command lines: the same arguments once precision, names and steps are left out.
    CHECK(command_arguments_beyond_precision("python3 /x/torchao_mlp.py --precision fp8 --steps 20 --name "
                                             "torchao_drift --twin torchao_drift_bf16_ref --plant-drift 1:8:1.6")
        == Args { "--plant-drift 1:8:1.6" });
    CHECK(command_arguments_beyond_precision("python3 /x/torchao_mlp.py --precision bf16 --steps 30 --name b --twin a "
                                             "--plant-drift 1:8:1.6")
        == Args { "--plant-drift 1:8:1.6" });
    // Megatron-style FP8 flags, a --flag=value, a config path named for its precision, an output file.
    CHECK(command_arguments_beyond_precision("python -u pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len "
                                             "1024 --bf16 --num-layers 24 --config=configs/llama_fp8.yaml -o "
                                             "out.sqlite configs/llama_fp8.yaml --seed=3 --compile")
        == Args { "--num-layers 24" });
    // A model flag stays, and so does a flag whose words only contain a listed one ("dropout" is not "out");
    // a negative number is a value, not a flag.
    CHECK(command_arguments_beyond_precision("python train.py --dropout 0.1 --lr -3e-4 --layers 2")
        == Args { "--dropout 0.1", "--lr -3e-4", "--layers 2" });
    CHECK(command_arguments_beyond_precision("python -m torch.distributed.run --nproc-per-node 2 train.py")
        == Args { "--nproc-per-node 2", "train.py" });
    // Two launches of one job differ in their rank and rendezvous, not in the job.
    CHECK(command_arguments_beyond_precision("python train.py --local-rank=1 --master-port 29501 --rdzv-endpoint "
                                             "localhost:29400 --rdzv-id 7 --layers 2")
        == Args { "--layers 2" });
    CHECK(command_arguments_beyond_precision("").empty());
}
