// The step and loss hooks (probes/python/fp8scope/_torch_hooks.py, docs/python.md "Steps and loss without code") on
// the stand-in torch (tests/python/fake_torch) and collector, started as `fp8scope record` starts a Python job: what
// they write for each kind of training iteration, that the job's own instrumentation wins, that torch's results and
// errors pass through, and when nothing is installed.
#include "python_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fp8scope::testing;

namespace {

const std::string kBootPath
    = "PYTHONPATH=" + std::string(FP8SCOPE_PYTHON_PACKAGE_DIR) + "/fp8scope/_boot:" + FP8SCOPE_PYTHON_PACKAGE_DIR;
const std::string kPreload = "LD_PRELOAD=" + kFakeCollector;

// The loss as the hook logs it: the tensor's pointer (the scenario's 0xA0 + n) on PyTorch's current stream.
std::string loss(const std::string& ptr, int dtype = 0)
{
    return "scalar_device name=loss value=" + ptr + " dtype=" + std::to_string(dtype) + " stream=0x5000";
}

std::string step_end(int step, int source = 1)
{
    return "step_end " + std::to_string(step) + " source=" + std::to_string(source);
}

// The collector's log without its first line (the package's version check).
std::vector<std::string> calls_after_lookup(const ScenarioRun& run)
{
    REQUIRE_FALSE(run.calls.empty());
    CHECK(run.calls.front() == "api_version 1");
    return { run.calls.begin() + 1, run.calls.end() };
}

} // namespace

TEST_CASE("torch hooks: one optimizer-source marker per step, numbered 0..N-1, and every backward's loss")
{
    const auto run = run_scenario("hooks_loop", { kBootPath, kPreload });
    CHECK(run.values.at("wrapped") == "True");
    CHECK(run.values.at("post_hooks") == "1");
    CHECK(run.warnings.empty());
    const std::vector<std::string> expected {
        loss("0xa0"),
        step_end(0),
        loss("0xa1"),
        step_end(1),
        loss("0xa2"),
        step_end(2), // one backward, one step
        loss("0xa3"),
        step_end(3), // two optimizers stepped after one backward: one step
        loss("0xa4"),
        loss("0xa5"),
        loss("0xa6"),
        step_end(4), // 3 accumulated backward passes: 3 losses, one step
        // the evaluation pass writes nothing; backward of a 4-element, a CPU, an int32 tensor or of a list: no loss
        step_end(5),
        loss("0xac"),
        step_end(6), // GradScaler.scale's output: the unscaled loss is logged, not the scaled one
        loss("0xad", 1),
        step_end(7, 2), // found inf: GradScaler skipped the optimizer's step, named as skipped
        loss("0xae"),
        step_end(8, 2), // torch.cuda.amp.GradScaler (a subclass): once, for both optimizers
        loss("0xaf"), // a backward that raises was given a loss; the failing optimizer step marks nothing
        loss("0xb0"),
    };
    CHECK(calls_after_lookup(run) == expected);
    // What torch returns and raises comes back unchanged.
    CHECK(run.values.at("scaler_step_returns") == "closure result");
    CHECK(run.values.at("skipped_returns") == "None");
    CHECK(run.values.at("backward_returns") == "None");
    CHECK(run.values.at("backward_error") == "element 0 of tensors does not require grad and does not have a grad_fn");
    CHECK(run.values.at("step_error") == "opt.step failed");
}

TEST_CASE("torch hooks: the job's own fp8scope.step() and log_scalar('loss') win")
{
    const auto run = run_scenario("hooks_job_instrumented", { kBootPath, kPreload });
    CHECK(run.warnings.empty());
    // No optimizer marker at all (the job marked step 0 before the first optimizer step), and only the job's loss:
    // the hook held step 0's from backward and dropped it when the job logged "loss" in that step.
    const std::vector<std::string> expected { "step 0", loss("0xa0"), "step 1", loss("0xa1") };
    CHECK(calls_after_lookup(run) == expected);
}

TEST_CASE("torch hooks: a loss left to the hooks lands in its own step, before the job's next marker, the last at exit")
{
    const auto run = run_scenario("hooks_job_marks_steps", { kBootPath, kPreload });
    CHECK(run.warnings.empty());
    const std::vector<std::string> expected { "step 0", loss("0xa0"), "step 1", loss("0xa1") };
    CHECK(calls_after_lookup(run) == expected);
}

TEST_CASE("torch hooks: FP8SCOPE_TORCH_HOOKS=0, or no collector, leaves torch untouched")
{
    SECTION("FP8SCOPE_TORCH_HOOKS=0")
    {
        const auto run = run_scenario("hooks_loop", { kBootPath, kPreload, "FP8SCOPE_TORCH_HOOKS=0" });
        CHECK(run.values.at("wrapped") == "False");
        CHECK(run.values.at("post_hooks") == "0");
        CHECK(run.calls == std::vector<std::string> { "api_version 1" }); // _scaled_mm's interception asked
        CHECK(run.values.at("scaler_step_returns") == "closure result");
        CHECK(run.values.at("step_error") == "opt.step failed");
    }
    SECTION("no collector")
    {
        const auto run = run_scenario("hooks_loop", { kBootPath });
        CHECK(run.values.at("wrapped") == "False");
        CHECK(run.values.at("post_hooks") == "0");
        CHECK_FALSE(run.log_written);
        CHECK(run.warnings.empty());
    }
    SECTION("both interceptions off: torch is imported as usual, the other one alone stays on")
    {
        const auto run
            = run_scenario("boot", { kBootPath, kPreload, "FP8SCOPE_TORCH_HOOKS=0", "FP8SCOPE_TORCH_SCALED_MM=0" });
        CHECK(run.values.at("loader") == "SourceFileLoader");
        const auto scaled_mm_only = run_scenario("boot", { kBootPath, kPreload, "FP8SCOPE_TORCH_HOOKS=0" });
        CHECK(scaled_mm_only.values.at("registered") == "['_scaled_grouped_mm', '_scaled_mm', '_scaled_mm.out']");
        const auto hooks_only = run_scenario("hooks_loop", { kBootPath, kPreload, "FP8SCOPE_TORCH_SCALED_MM=0" });
        CHECK(hooks_only.values.at("wrapped") == "True");
    }
}

TEST_CASE("torch hooks: a collector without fp8scope_step_end, or an error of their own, gives one warning")
{
    const auto old = run_scenario("hooks_old_collector", { kBootPath, kPreload });
    CHECK(old.values.at("wrapped") == "False");
    REQUIRE(old.warnings.size() == 1);
    CHECK(warnings_containing(old, "has no fp8scope_step_end") == 1);
    CHECK(calls_after_lookup(old).empty());

    // The call goes on to torch unchanged; the hooks go quiet and the optimizer hook is removed.
    const auto failed = run_scenario("hooks_error", { kBootPath, kPreload });
    CHECK(failed.values.at("strange_returns") == "None");
    CHECK(failed.values.at("post_hooks") == "0");
    REQUIRE(failed.warnings.size() == 1);
    CHECK(warnings_containing(failed, "hooks stopped after an error: ValueError: no dtype") == 1);
    CHECK(calls_after_lookup(failed).empty());
}
