#include "output_path.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace fp8scope::collector;

TEST_CASE("output patterns expand host, pid, rank, counter and percent")
{
    const OutputNameInputs in { "node7", 1234, 3 };
    CHECK(expand_output_pattern(kDefaultOutputPattern, in, 0) == "fp8scope-node7-1234.sqlite");
    CHECK(expand_output_pattern("runs/r%r-%p-%n.sqlite", in, 0) == "runs/r3-1234-0.sqlite");
    CHECK(expand_output_pattern("runs/r%r-%p-%n.sqlite", in, 2) == "runs/r3-1234-2.sqlite");
    CHECK(expand_output_pattern("100%%-%h", in, 0) == "100%-node7");
    CHECK(expand_output_pattern("odd-%q.sqlite", in, 0) == "odd-%q.sqlite"); // unknown: kept visibly
    CHECK(expand_output_pattern("trailing%", in, 0) == "trailing%");
    const OutputNameInputs no_rank { "h", 1, std::nullopt };
    CHECK(expand_output_pattern("r%r", no_rank, 0) == "r0");
}

TEST_CASE("without %n, later attempts insert a counter before the extension instead of clobbering")
{
    const OutputNameInputs in { "h", 9, std::nullopt };
    CHECK(expand_output_pattern("out.sqlite", in, 1) == "out-1.sqlite");
    CHECK(expand_output_pattern("dir.d/out", in, 2) == "dir.d/out-2");
    CHECK(expand_output_pattern("dir/.hidden", in, 1) == "dir/.hidden-1");
}

TEST_CASE("rank and world size come from the launcher's variables, first match wins")
{
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
    CHECK_FALSE(rank_from_environment().has_value());
    setenv("SLURM_PROCID", "5", 1);
    CHECK(rank_from_environment() == 5);
    setenv("RANK", "2", 1);
    CHECK(rank_from_environment() == 2);
    setenv("RANK", "two", 1); // not a number: the next variable is used
    CHECK(rank_from_environment() == 5);
    unsetenv("RANK");
    unsetenv("SLURM_PROCID");
    setenv("WORLD_SIZE", "8", 1);
    CHECK(world_size_from_environment() == 8);
    unsetenv("WORLD_SIZE");
}
