// The collector's steps (collector/src/capture/steps.hpp): one source per process, the job's markers first, then NVTX
// step ranges when one came before the first optimizer step end, then the optimizer's step ends. No GPU.
#include "capture/steps.hpp"

#include <catch2/catch.hpp>

#include <optional>

using namespace fp8scope::collector;

TEST_CASE("steps: none is known before any source speaks", "[collector][steps]")
{
    const Steps steps;
    CHECK(steps.current() == std::nullopt);
    CHECK_FALSE(steps.marked());
    CHECK_FALSE(steps.optimizer_driven());
    CHECK(steps.nvtx_ranges_seen() == 0);
    CHECK_FALSE(steps.begun_by(true));
    CHECK_FALSE(steps.begun_by(false));
}

TEST_CASE("steps: the k-th NVTX step range is step k-1", "[collector][steps]")
{
    Steps steps;
    CHECK(steps.count_nvtx_range() == 0);
    CHECK(steps.current() == 0);
    CHECK(steps.count_nvtx_range() == 1);
    CHECK(steps.count_nvtx_range() == 2);
    CHECK(steps.current() == 2);
    CHECK(steps.nvtx_ranges_seen() == 3);
}

TEST_CASE("steps: the job's markers win over NVTX ranges and optimizer step ends", "[collector][steps]")
{
    Steps steps;
    steps.count_nvtx_range();
    steps.count_nvtx_range();
    steps.mark(40);
    CHECK(steps.current() == 40);
    CHECK(steps.marked());
    steps.count_nvtx_range(); // still counted (meta nvtx_step_ranges), no longer the step
    CHECK(steps.current() == 40);
    CHECK_FALSE(steps.begin_optimizer_step(7));
    CHECK_FALSE(steps.optimizer_driven());
    CHECK(steps.current() == 40);
    CHECK(steps.begun_by(false));
    CHECK_FALSE(steps.begun_by(true));
    steps.mark(41);
    CHECK(steps.current() == 41);
}

TEST_CASE("steps: optimizer step ends begin the next step when nothing else marks steps", "[collector][steps]")
{
    Steps steps;
    CHECK(steps.begin_optimizer_step(1)); // fp8scope_step_end(0): step 1 begins; step 0 is never told
    CHECK(steps.optimizer_driven());
    CHECK(steps.begun_by(true));
    CHECK_FALSE(steps.begun_by(false));
    CHECK(steps.current() == 1);
    // NVTX step ranges after the first optimizer step end do not take over.
    steps.count_nvtx_range();
    CHECK(steps.begin_optimizer_step(2));
    CHECK(steps.current() == 2);
    // The job's first marker does.
    steps.mark(9);
    CHECK(steps.current() == 9);
    CHECK_FALSE(steps.begun_by(true)); // an optimizer step end is no longer a step's beginning
    CHECK(steps.begun_by(false));
    CHECK_FALSE(steps.begin_optimizer_step(3));
    CHECK(steps.current() == 9);
}

TEST_CASE("steps: NVTX step ranges before the first optimizer step end keep the count", "[collector][steps]")
{
    Steps steps;
    steps.count_nvtx_range();
    CHECK_FALSE(steps.begin_optimizer_step(1));
    CHECK_FALSE(steps.optimizer_driven());
    CHECK(steps.current() == 0);
    CHECK_FALSE(steps.begun_by(true)); // the ranges begin the steps, at no call the caller can stand at
    CHECK_FALSE(steps.begun_by(false));
}

TEST_CASE("steps: step ranges are the analyzer's default step names", "[collector][steps]")
{
    CHECK(is_step_range_name("train_step"));
    CHECK(is_step_range_name("step"));
    CHECK(is_step_range_name("iteration"));
    CHECK(is_step_range_name("ProfilerStep#12"));
    CHECK_FALSE(is_step_range_name("forward"));
    CHECK_FALSE(is_step_range_name("train_step_inner"));
}
