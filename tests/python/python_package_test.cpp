// The fp8scope Python package (probes/python/fp8scope) on a machine without torch or a GPU: probe, step,
// log_scalar and enabled, and how the package finds the collector. The stand-in collector (fake_collector.c)
// reaches python3 the way libfp8scope.so would (LD_PRELOAD, or a local dlopen like the CUDA driver's) and logs
// every C API call with its arguments. The real torch and GPU checks are tests/gpu/tools/python_package_check.py.
#include "python_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope::testing;

namespace {

const std::string& kFake = kFakeCollector;

} // namespace

TEST_CASE("with no collector loaded the package imports and every call is a silent no-op")
{
    // Also with CUDA_INJECTION64_PATH naming a library that does not exist: nothing to find, nothing to warn about.
    for (const auto& env : { std::vector<std::string> {},
             std::vector<std::string> { "CUDA_INJECTION64_PATH=/nonexistent/libfp8scope.so" } }) {
        const auto run = run_scenario("nothing_loaded", env);
        CHECK(run.values.at("enabled") == "False");
        CHECK(run.values.at("results") == "[False, False, False, False]");
        CHECK(run.values.at("annotate_active") == "False");
        CHECK(run.values.at("torch_imported") == "False");
        CHECK(run.warnings.empty());
        CHECK_FALSE(run.log_written);
    }
}

TEST_CASE("a preloaded collector receives each call with its arguments")
{
    const auto run = run_scenario("preload_calls", { "LD_PRELOAD=" + kFake });
    CHECK(run.values.at("enabled") == "True");
    CHECK(run.values.at("found_via") == "global scope");
    for (const char* key : { "probe_plain", "probe_value", "probe_device", "probe_device_inv", "probe_fp8",
             "probe_torch_stream", "scalar_torch_stream", "name_with_nul" })
        CHECK(run.values.at(key) == "True");
    CHECK(run.values.at("probe_f16_f32") == "[True, True]");
    for (const char* key : { "probe_cpu", "probe_int", "probe_empty", "probe_both_scales", "probe_bad_scale",
             "probe_bad_target", "probe_not_a_tensor" })
        CHECK(run.values.at(key) == "False");
    CHECK(run.values.at("probe_strided") == "[False, False]");
    CHECK(run.values.at("probe_zero_scale") == "[False, False]");
    CHECK(run.values.at("steps") == "[True, True, True, True, False]");
    CHECK(run.values.at("scalars") == "[True, True, True, True, True, True, False, False]");

    const std::string plain = "data=0x1000 numel=4096 dtype=1";
    const std::vector<std::string> expected {
        "api_version 1",
        probe_line("name=plain " + plain + " target=0 role=7 scale_kind=0 scale=0 scale_device=0x0 stream=0x0"),
        probe_line("name=value " + plain + " target=1 role=3 scale_kind=1 scale=2.5 scale_device=0x0 stream=0x77"),
        probe_line("name=device " + plain + " target=2 role=6 scale_kind=3 scale=0 scale_device=0xa000 stream=0x77"),
        probe_line(
            "name=device_inv " + plain + " target=1 role=4 scale_kind=4 scale=0 scale_device=0xa000 stream=0x77"),
        // An FP8 tensor is measured in its own format whatever the target says.
        probe_line("name=fp8 data=0x3000 numel=256 dtype=4 target=2 role=7 scale_kind=2 scale=0.25 scale_device=0x0 "
                   "stream=0x77"),
        probe_line("name=f16 data=0x4000 numel=8 dtype=2 target=1 role=7 scale_kind=0 scale=0 scale_device=0x0 "
                   "stream=0x0"),
        probe_line("name=f32 data=0x5000 numel=8 dtype=0 target=0 role=7 scale_kind=0 scale=0 scale_device=0x0 "
                   "stream=0x0"),
        "step 0",
        "step 1",
        "step 10",
        "step 11",
        "scalar name=lr value=0.001",
        "scalar name=count value=7",
        "scalar name=nan_loss value=nan",
        "scalar name=inf_loss value=-inf",
        "scalar_device name=loss value=0xc000 dtype=0 stream=0x77",
        "scalar_device name=loss_bf16 value=0xd000 dtype=1 stream=0x77",
        // With torch imported, the tensor's device's current stream.
        probe_line(
            "name=torch_stream " + plain + " target=0 role=7 scale_kind=0 scale=0 scale_device=0x0 stream=0x5000"),
        "scalar_device name=torch_loss value=0xf000 dtype=2 stream=0x5000",
        probe_line("name=a?b " + plain + " target=0 role=7 scale_kind=0 scale=0 scale_device=0x0 stream=0x77"),
    };
    CHECK(run.calls == expected);

    // One warning per kind of problem: two non-contiguous tensors, one warning.
    CHECK(warnings_containing(run, "not contiguous") == 1);
    for (const char* what : { "not on a CUDA device", "dtype int32 is not measured", "not both",
             "a device scale must be a float32 tensor of one element", "unknown target 'e3m4'", "finite and > 0",
             "without a name", "step(-1) ignored", "a device scalar must be", "a number or a tensor is needed" })
        CHECK(warnings_containing(run, what) == 1);
    CHECK(run.warnings.size() == 11);
}

TEST_CASE("a collector that is loaded but not recording gets the calls, which report False")
{
    const auto run = run_scenario("not_recording", { "LD_PRELOAD=" + kFake, "FAKE_FP8SCOPE_STATUS=-1" });
    CHECK(run.values.at("enabled") == "True");
    CHECK(run.values.at("results") == "[False, False, False, False]");
    CHECK(run.calls.size() == 5); // api_version, probe, step, scalar, scalar_device
    CHECK(run.warnings.empty());
}

TEST_CASE("CUDA_INJECTION64_PATH: the collector is found once the driver has loaded it, never loaded by the package")
{
    const auto run = run_scenario("injection_loaded_later", { "CUDA_INJECTION64_PATH=" + kFake });
    CHECK(run.values.at("enabled_before") == "False");
    CHECK(run.values.at("step_before") == "False");
    CHECK(run.values.at("loaded_before") == "False"); // looking for it did not load it
    CHECK(run.values.at("global_visible") == "False"); // so it was found through the injection path
    CHECK(run.values.at("enabled_after") == "True");
    CHECK(run.values.at("found_via") == "CUDA_INJECTION64_PATH");
    CHECK(run.values.at("step_after") == "True");
    CHECK(run.values.at("probe_after") == "True");
    const std::vector<std::string> expected { "api_version 1", "step 1",
        probe_line("name=late data=0x1000 numel=8 dtype=0 target=0 role=7 scale_kind=0 scale=0 scale_device=0x0 "
                   "stream=0x77") };
    CHECK(run.calls == expected); // step 0 was marked before the collector came, and counted
    CHECK(run.warnings.empty());
}

TEST_CASE("CUDA_INJECTION64_PATH naming a collector that never comes: no-op, and the library is not loaded")
{
    const auto run = run_scenario("injection_never_loaded", { "CUDA_INJECTION64_PATH=" + kFake });
    CHECK(run.values.at("enabled") == "False");
    CHECK(run.values.at("undecided") == "True");
    CHECK(run.values.at("results") == "[False, False, False, False]");
    CHECK(run.values.at("absent") == "True"); // a CUDA tensor proves CUDA is up: no more look-ups
    CHECK(run.values.at("loaded") == "False");
    CHECK_FALSE(run.log_written);
    CHECK(run.warnings.empty());
}

TEST_CASE("a collector with another C API version: everything is a no-op, with one warning")
{
    const auto run = run_scenario("version_mismatch", { "LD_PRELOAD=" + kFake, "FAKE_FP8SCOPE_API_VERSION=2" });
    CHECK(run.values.at("enabled") == "[False, False]");
    CHECK(run.values.at("results") == "[False, False, False, False]");
    CHECK(run.calls == std::vector<std::string> { "api_version 2" }); // asked once, then never called again
    REQUIRE(run.warnings.size() == 1);
    CHECK(run.warnings[0].find("C API version 2, this package speaks version 1") != std::string::npos);
}
