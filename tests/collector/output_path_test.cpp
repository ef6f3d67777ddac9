#include "session/output_path.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace fp8scope::collector;

TEST_CASE("output patterns expand host, pid, rank, counter and percent")
{
    const OutputNameInputs in { "node7", 1234, 3, std::nullopt };
    CHECK(expand_output_pattern(kDefaultOutputPattern, in, 0) == "fp8scope-node7-1234.sqlite");
    CHECK(expand_output_pattern("runs/r%r-%p-%n.sqlite", in, 0) == "runs/r3-1234-0.sqlite");
    CHECK(expand_output_pattern("runs/r%r-%p-%n.sqlite", in, 2) == "runs/r3-1234-2.sqlite");
    CHECK(expand_output_pattern("100%%-%h", in, 0) == "100%-node7");
    CHECK(expand_output_pattern("odd-%q.sqlite", in, 0) == "odd-%q.sqlite"); // unknown: kept visibly
    CHECK(expand_output_pattern("trailing%", in, 0) == "trailing%");
}

TEST_CASE("a process without a rank never takes rank 0's name: %r is 'norank' there, or its LOCAL_RANK")
{
    // torchrun's launcher has no RANK; when it initializes CUDA it must not take rank0.sqlite
    // (docs/collector.md "Attaching it").
    const OutputNameInputs launcher { "h", 1, std::nullopt, std::nullopt };
    CHECK(expand_output_pattern("rank%r.sqlite", launcher, 0) == "ranknorank.sqlite");
    CHECK(expand_output_pattern("rank%r.sqlite", launcher, 1) == "ranknorank-1.sqlite");
    const OutputNameInputs rank0 { "h", 2, 0, 0 };
    CHECK(expand_output_pattern("rank%r.sqlite", rank0, 0) == "rank0.sqlite");
    // The global rank wins over the local one (node 1 of a 2 x 4 job).
    const OutputNameInputs node1 { "h", 3, 5, 1 };
    CHECK(expand_output_pattern("rank%r.sqlite", node1, 0) == "rank5.sqlite");
    // Only LOCAL_RANK set (a single-node launcher that sets nothing else): the local rank.
    const OutputNameInputs local_only { "h", 4, std::nullopt, 1 };
    CHECK(expand_output_pattern("rank%r.sqlite", local_only, 0) == "rank1.sqlite");
}

TEST_CASE("without %n, later attempts insert a counter before the extension instead of clobbering")
{
    const OutputNameInputs in { "h", 9, std::nullopt, std::nullopt };
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

TEST_CASE("the local rank comes from LOCAL_RANK only, and is not a rank")
{
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("LOCAL_RANK");
    CHECK_FALSE(local_rank_from_environment().has_value());
    setenv("LOCAL_RANK", "3", 1);
    CHECK(local_rank_from_environment() == 3);
    CHECK_FALSE(rank_from_environment().has_value()); // meta `rank` stays -1: a local rank is not a global one
    setenv("LOCAL_RANK", "-1", 1);
    CHECK_FALSE(local_rank_from_environment().has_value());
    unsetenv("LOCAL_RANK");
}

namespace {

namespace fs = std::filesystem;

// A fresh directory for one test.
std::string fresh_dir(const std::string& name)
{
    const std::string dir = std::string(FP8SCOPE_TEST_TMP) + "/collector/" + name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string contents(const std::string& path)
{
    std::ostringstream bytes;
    bytes << std::ifstream(path, std::ios::binary).rdbuf();
    return bytes.str();
}

const OutputNameInputs kInputs { "node7", 1234, 0, std::nullopt };

} // namespace

TEST_CASE("the collector never overwrites a file at its output path: the next counter is used")
{
    const std::string dir = fresh_dir("create_existing");
    {
        std::ofstream(dir + "/trace.sqlite") << "another run's trace";
    }
    std::string path;
    auto db = create_trace_file(dir + "/trace.sqlite", kInputs, fp8scope::SessionInfo {}, path);
    REQUIRE(db);
    CHECK(path == dir + "/trace-1.sqlite");
    CHECK(contents(dir + "/trace.sqlite") == "another run's trace");
}

TEST_CASE("the collector never follows a symlink at its output path, dangling or not")
{
    const std::string dir = fresh_dir("create_symlink");
    const std::string target = dir + "/precious.txt";
    {
        std::ofstream(target) << "precious";
    }
    fs::create_symlink(target, dir + "/rank0.sqlite");
    fs::create_symlink(dir + "/never-created.sqlite", dir + "/rank0-1.sqlite");
    std::string path;
    auto db = create_trace_file(dir + "/rank%r.sqlite", kInputs, fp8scope::SessionInfo {}, path);
    REQUIRE(db);
    CHECK(path == dir + "/rank0-2.sqlite");
    CHECK(fs::is_regular_file(fs::symlink_status(path)));
    CHECK(contents(target) == "precious");
    CHECK_FALSE(fs::exists(dir + "/never-created.sqlite"));
    CHECK(fs::is_symlink(dir + "/rank0.sqlite"));
    CHECK(fs::is_symlink(dir + "/rank0-1.sqlite"));
}

TEST_CASE("the collector makes the output path's missing folders")
{
    const std::string dir = fresh_dir("create_folders");
    std::string path;
    auto db = create_trace_file(dir + "/runs/a/trace.sqlite", kInputs, fp8scope::SessionInfo {}, path);
    INFO((db ? std::string() : db.error().message));
    REQUIRE(db);
    CHECK(path == dir + "/runs/a/trace.sqlite");
    CHECK(fs::is_regular_file(path));
}
