// The dispatcher interception of torch._scaled_mm (probes/python/fp8scope/_scaled_gemm.py, docs/python.md "Scaled
// GEMMs") on the stand-in torch (tests/python/fake_torch) and collector: what it registers, what it reports for each
// recipe, that the op's result and errors pass through untouched, and how `fp8scope record`'s sitecustomize installs
// it when the job imports torch. The real PyTorch on the H100: tests/gpu/check_zoo.py, stage `recipes`.
#include "python_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope::testing;

namespace {

const std::string kBoot = std::string(FP8SCOPE_PYTHON_PACKAGE_DIR) + "/fp8scope/_boot";

std::string gemm_line(const std::string& a, const std::string& b)
{
    return "scaled_gemm " + a + " " + b + " d=256x384/384,1 dtype=1 recipe=-1 scale=0x0 0x0/0,0 stream=0x5000 size=ok";
}

} // namespace

TEST_CASE("torch._scaled_mm: wrapped once, each GEMM reported with its operands' recipes, the op left as it was")
{
    const auto run = run_scenario("scaled_mm", { "LD_PRELOAD=" + kFakeCollector });
    CHECK(run.values.at("installed") == "[True, True]");
    // The default and out overloads, on the CUDA key, with the key set (the wrapper calls the kernel it replaced).
    CHECK(run.values.at("registered")
        == "['_scaled_grouped_mm:CUDA:True', '_scaled_mm.out:CUDA:True', '_scaled_mm:CUDA:True']");
    for (const char* label : { "tensorwise_out", "rowwise_out", "blockwise_out", "mx_out" })
        CHECK(run.values.at(label) == "(256, 384)");
    CHECK(run.values.at("out_overload_returns_out") == "True");
    CHECK(run.values.at("bad_scale") == "[(256, 384), (256, 384)]");
    CHECK(run.values.at("kernel_error_passes_through") == "the kernel failed");
    CHECK(run.values.at("kernel_calls") == "9");
    CHECK(run.values.at("grouped_out") == "(1024, 1024)");
    REQUIRE(run.warnings.size() == 1); // the failed report, once for two calls
    CHECK(warnings_containing(run, "aten::_scaled_mm could not be reported") == 1);

    // mat1 is 256x512 row-major, mat2 512x384 column-major (a weight transposed); D 256x384 BF16. The recipe comes
    // from the scale's shape: one element; (m, 1) and (1, n); (m, k/128) and, for 128x128 blocks, (k/128, n/128);
    // E8M0 scales by their dtype. A tensorwise scale is passed as the pointer the statistics dequantize with.
    const std::string a = "a=256x512/512,1 dtype=3 ";
    const std::string b = "b=512x384/1,512 dtype=3 ";
    const std::vector<std::string> expected {
        gemm_line(a + "recipe=0 scale=0x51 1x1/1,1", b + "recipe=0 scale=0x52 1x1/1,1"),
        gemm_line(a + "recipe=1 scale=0x53 256x1/1,1", b + "recipe=1 scale=0x54 1x384/384,1"),
        gemm_line(a + "recipe=2 scale=0x55 256x4/1,256", b + "recipe=3 scale=0x56 4x3/1,4"),
        gemm_line(a + "recipe=4 scale=0x57 256x16/16,1", b + "recipe=4 scale=0x58 16x384/384,1"),
        gemm_line(a + "recipe=0 scale=0x51 1x1/1,1", b + "recipe=0 scale=0x51 1x1/1,1"), // the out overload
        // The grouped GEMM: A every expert's rows, B every expert's weight stacked (4 x 1024 rows of K), rowwise.
        "scaled_gemm a=1024x512/512,1 dtype=3 recipe=1 scale=0x61 1024x1/1,1 b=4096x512/512,1 dtype=3 recipe=1 "
        "scale=0x62 4096x1/1,1 d=1024x1024/1024,1 dtype=1 recipe=-1 scale=0x0 0x0/0,0 stream=0x5000 size=ok groups=4",
    };
    std::vector<std::string> described, asked;
    for (const std::string& call : run.calls) {
        if (call.starts_with("scaled_gemm "))
            described.push_back(call);
        if (call.starts_with("library_gemm "))
            asked.push_back(call);
    }
    CHECK(described == expected);
    // A GEMM with no operand scaled per row or block is first asked about by its output (cuBLAS(Lt) may have it),
    // then described: the tensorwise, MX and out-overload ones (the out overload's output is the tensor given). The
    // rowwise and blockwise ones are described straight away (their scales' layout is what per-block statistics
    // need), and the two with a bad scale fail before asking.
    CHECK(asked.size() == 3);
    CHECK(std::ranges::count(asked, std::string("library_gemm 0xd0000")) == 1);

    // cuBLAS(Lt) ran every one: the others asked and not described, the rowwise and blockwise ones described all the
    // same; the bad scale is noticed when its recipe is read.
    const auto covered = run_scenario("scaled_mm", { "LD_PRELOAD=" + kFakeCollector, "FAKE_FP8SCOPE_LIBRARY_GEMM=1" });
    std::vector<std::string> covered_described;
    for (const std::string& call : covered.calls)
        if (call.starts_with("scaled_gemm "))
            covered_described.push_back(call);
    CHECK(covered_described == std::vector<std::string> { expected[1], expected[2], expected[5] });
    CHECK(
        std::ranges::count_if(covered.calls, [](const std::string& c) { return c.starts_with("library_gemm"); }) == 3);
    CHECK(warnings_containing(covered, "aten::_scaled_mm could not be reported") == 1);

    // In a step without statistics the scales' layout is not needed: every GEMM is only asked about.
    const auto unsampled = run_scenario("scaled_mm",
        { "LD_PRELOAD=" + kFakeCollector, "FAKE_FP8SCOPE_LIBRARY_GEMM=1", "FAKE_FP8SCOPE_STATS_WANTED=0" });
    CHECK(
        std::ranges::count_if(unsampled.calls, [](const std::string& c) { return c.starts_with("scaled_gemm"); }) == 0);
    CHECK(std::ranges::count_if(unsampled.calls, [](const std::string& c) { return c.starts_with("library_gemm"); })
        == 5);
}

TEST_CASE("torch._scaled_mm: the wrappers leave at a step that takes no statistics and come back at one that does")
{
    const auto run = run_scenario("scaled_mm_follow", { "LD_PRELOAD=" + kFakeCollector });
    // Three ops wrapped; removed at step 0, left removed at step 1, back at step 2, kept at an optimizer step end.
    CHECK(run.values.at("seen") == "['installed:3', 'step0:0', 'step1:0', 'step2:3', 'optimizer:3']");
    CHECK(run.values.at("destroyed") == "1");
    CHECK(run.values.at("get_kernel_calls") == "6"); // the kernels looked up again when put back
    CHECK(run.values.at("after") == "(256, 384)");
    // Put back, the GEMM is reported again; the pointer cuBLAS(Lt) may have left on this thread was forgotten first.
    CHECK(std::ranges::count(run.calls, std::string("library_gemm 0x0")) == 1);
    CHECK(std::ranges::count_if(run.calls, [](const std::string& c) { return c.starts_with("scaled_gemm "); }) == 1);
    // A Library that cannot remove its registrations: one warning, and the wrappers stay.
    CHECK(run.values.at("kept") == "3");
    REQUIRE(run.warnings.size() == 1);
    CHECK(warnings_containing(run, "could not be removed at a step's beginning") == 1);
}

TEST_CASE("torch._scaled_mm on a PyTorch without torch.library.get_kernel: annotate is silent, the explicit call warns")
{
    const auto run = run_scenario("old_torch", { "LD_PRELOAD=" + kFakeCollector });
    CHECK(run.values.at("annotate_active") == "True");
    CHECK(run.values.at("explicit") == "[False, False]");
    REQUIRE(run.warnings.size() == 1);
    CHECK(warnings_containing(run, "has no torch.library.get_kernel (2.9 or newer)") == 1);
}

TEST_CASE("record's sitecustomize: the job's own one still runs, and the wrappers arrive with `import torch`")
{
    const std::string path = "PYTHONPATH=" + kBoot + ":" + FP8SCOPE_PYTHON_PACKAGE_DIR + ":" + FP8SCOPE_FAKE_SITE_DIR;
    SECTION("a collector preloaded: wrapped")
    {
        const auto run = run_scenario("boot", { path, "LD_PRELOAD=" + kFakeCollector });
        CHECK(run.values.at("job_sitecustomize_ran") == "True");
        CHECK(run.values.at("torch_before") == "False"); // start-up imports no torch
        CHECK(run.values.at("loader") == "_Loader");
        CHECK(run.values.at("resource_reader") == "True"); // the wrapping loader still answers for torch's own
        CHECK(run.values.at("registered") == "['_scaled_grouped_mm', '_scaled_mm', '_scaled_mm.out']");
        CHECK(run.warnings.empty());
    }
    SECTION("no collector: nothing to report to, so nothing is wrapped")
    {
        const auto run = run_scenario("boot", { path });
        CHECK(run.values.at("job_sitecustomize_ran") == "True");
        CHECK(run.values.at("registered") == "[]");
        CHECK_FALSE(run.log_written);
    }
    SECTION("FP8SCOPE_TORCH_SCALED_MM=0: nothing wrapped (the step and loss hooks still arrive with torch)")
    {
        const auto run = run_scenario("boot", { path, "LD_PRELOAD=" + kFakeCollector, "FP8SCOPE_TORCH_SCALED_MM=0" });
        CHECK(run.values.at("loader") == "_Loader");
        CHECK(run.values.at("registered") == "[]");
        CHECK(run.values.at("job_sitecustomize_ran") == "True");
    }
}
