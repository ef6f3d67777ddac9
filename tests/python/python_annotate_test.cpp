// fp8scope.torch.annotate on a stand-in PyTorch (fake_torch/torch): the NVTX ranges the hooks push and pop, the
// cast-statistics mode entered once around the outermost module, the probes at FP8 casts with their names, and
// that nothing is installed without a collector. Real PyTorch is checked by tests/gpu/tools/python_package_check.py.
#include "python_test_support.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope::testing;

namespace {

// Cast probes: the source tensor against the target format with scale 1 (scale_kind 1), on the current stream.
std::string cast_probe(const std::string& name, const std::string& data, int numel, int target, int role)
{
    return probe_line("name=" + name + " data=" + data + " numel=" + std::to_string(numel)
        + " dtype=1 target=" + std::to_string(target) + " role=" + std::to_string(role)
        + " scale_kind=1 scale=1 scale_device=0x0 stream=0x5000");
}

} // namespace

TEST_CASE("annotate: NVTX ranges per module, cast statistics named <module>.<n>, hooks removed by the handle")
{
    const auto run = run_scenario("annotate", { "LD_PRELOAD=" + kFakeCollector });
    CHECK(run.values.at("active") == "True");
    CHECK(run.values.at("hooks") == "20"); // 5 modules x (forward pre, forward post, backward pre, backward)

    // The root takes its class name; the never-called container gets hooks but no range; the mode is entered
    // once, inside the outermost range, and left before it closes.
    CHECK(run.values.at("forward_nvtx")
        == "push Model|mode_enter|push blocks.b0|push blocks.b0.fc1|pop|push blocks.b0.fc2|pop|pop|mode_exit|pop");
    // fc1's backward pre-hook fired without its backward hook; b0's hook closed the range left open.
    CHECK(run.values.at("backward_nvtx")
        == "push Model.backward|push blocks.b0.backward|push blocks.b0.fc2.backward|pop|"
           "push blocks.b0.fc1.backward|pop|pop|pop");
    // A forward that raises still closes its ranges and leaves the mode (always_call hooks).
    CHECK(run.values.at("forward_error") == "forward failed");
    CHECK(run.values.at("failed_forward_nvtx") == run.values.at("forward_nvtx"));
    CHECK(run.values.at("second_annotate_active") == "False");
    CHECK(warnings_containing(run, "already annotated") == 1);
    CHECK(run.values.at("hooks_after_remove") == "0");
    CHECK(run.values.at("removed_nvtx").empty());
    // cast_stats=False, backward=False: forward ranges only, no mode.
    CHECK(run.values.at("plain_hooks") == "10");
    CHECK(run.values.at("plain_nvtx") == "push blocks.b0.fc1|pop");
    CHECK(run.values.at("plain_hooks_after") == "0");
    CHECK(run.warnings.size() == 1);

    // Two forwards while annotated (the second one raised after its casts); each module numbers its casts from 0
    // in every call. Per Fp8Linear: 0 the input, 1 the weight (a Parameter: role 4), 2 the input again (its
    // FP8-to-FP8 re-cast and the float32 cast are not measured), 3 the input through copy_ into an E5M2 tensor.
    // Nothing after remove(), and nothing for the cast made outside any module. Tensor addresses come from the
    // stand-in's counter: 0x10000 and 0x11000 are the two weights, 0x12000 the input.
    REQUIRE(run.calls.size() == 1 + 2 * 9);
    CHECK(run.calls[0] == "api_version 1");
    const std::vector<std::string> first_forward {
        cast_probe("blocks.b0.fc1.0", "0x12000", 32, 1, 7),
        cast_probe("blocks.b0.fc1.1", "0x10000", 64, 1, 4),
        cast_probe("blocks.b0.fc1.2", "0x12000", 32, 1, 7),
        cast_probe("blocks.b0.fc1.3", "0x12000", 32, 2, 7),
        cast_probe("blocks.b0.fc2.0", "0x19000", 32, 1, 7),
        cast_probe("blocks.b0.fc2.1", "0x11000", 64, 1, 4),
        cast_probe("blocks.b0.fc2.2", "0x19000", 32, 1, 7),
        cast_probe("blocks.b0.fc2.3", "0x19000", 32, 2, 7),
        cast_probe("Model.0", "0x20000", 32, 2, 7),
    };
    CHECK(std::vector<std::string>(run.calls.begin() + 1, run.calls.begin() + 10) == first_forward);
    for (size_t i = 0; i < first_forward.size(); ++i) { // same names in the second forward
        const auto name_of = [](const std::string& line) { return line.substr(0, line.find(" data=")); };
        CHECK(name_of(run.calls[10 + i]) == name_of(first_forward[i]));
    }
}

TEST_CASE("annotate outside a capture window or a sampled step: ranges, but no mode and no probe")
{
    const auto run
        = run_scenario("annotate_unwanted", { "LD_PRELOAD=" + kFakeCollector, "FAKE_FP8SCOPE_STATS_WANTED=0" });
    CHECK(run.values.at("stats_wanted") == "False");
    CHECK(run.values.at("active") == "True");
    // The NVTX ranges stay (they name the sites inside later windows and mark NVTX steps); the cast mode is not
    // entered, and a direct probe returns before reaching the collector.
    CHECK(run.values.at("forward_nvtx")
        == "push Model|push blocks.b0|push blocks.b0.fc1|pop|push blocks.b0.fc2|pop|pop|pop");
    CHECK(run.values.at("probe") == "False");
    CHECK(run.calls == std::vector<std::string> { "api_version 1" });
    CHECK(run.warnings.empty());
}

TEST_CASE("annotate between capture windows: only the root's hooks, the rest installed at the root's forward")
{
    const auto run = run_scenario("annotate_windows", { "LD_PRELOAD=" + kFakeCollector });
    CHECK(run.values.at("recording") == "False");
    CHECK(run.values.at("active") == "True");
    CHECK(run.values.at("annotated_hooks") == "4"); // the root's forward pre/post and backward pre/post
    CHECK(run.values.at("outside_hooks") == "4");
    CHECK(run.values.at("outside_nvtx").empty()); // nothing pushed, no mode
    // The window opened before the forward: the root's hook installed the rest before any submodule ran, so the
    // root's own range is there too. No statistics wanted: no mode.
    CHECK(run.values.at("window_hooks") == "20");
    CHECK(run.values.at("window_nvtx")
        == "push Model|push blocks.b0|push blocks.b0.fc1|pop|push blocks.b0.fc2|pop|pop|pop|"
           "push Model.backward|push blocks.b0.backward|pop|pop");
    CHECK(run.values.at("stats_outside_hooks") == "20");
    CHECK(run.values.at("stats_outside_nvtx")
        == "push Model|mode_enter|push blocks.b0|push blocks.b0.fc1|pop|push blocks.b0.fc2|pop|pop|mode_exit|pop|"
           "push Model.backward|push blocks.b0.backward|pop|pop");
    CHECK(run.values.at("after_hooks") == "4");
    CHECK(run.values.at("after_nvtx").empty());
    CHECK(run.values.at("removed_hooks") == "0");
    // Probes only in the phase that wanted statistics: one forward's 9 casts.
    REQUIRE(run.calls.size() == 1 + 9);
    CHECK(run.calls[1].rfind("probe name=blocks.b0.fc1.0 ", 0) == 0);
    CHECK(run.warnings.empty());
}

TEST_CASE("annotate without a collector installs no hook")
{
    const auto run = run_scenario("annotate_without_collector");
    CHECK(run.values.at("active") == "False");
    CHECK(run.values.at("hooks") == "0");
    CHECK_FALSE(run.log_written);
    CHECK(run.warnings.empty());
}

TEST_CASE("annotate before CUDA is up with CUDA_INJECTION64_PATH set: hooks wait, and stay silent without one")
{
    const auto run = run_scenario("annotate_pending", { "CUDA_INJECTION64_PATH=" + kFakeCollector });
    CHECK(run.values.at("active") == "True"); // the driver could still load the collector
    CHECK(run.values.at("nvtx").empty());
    CHECK(run.values.at("absent") == "True");
    CHECK_FALSE(run.log_written);
    CHECK(run.warnings.empty());
}
