// The collector's own NVTX range path per thread (collector/src/calls/nvtx_paths.hpp), which names tensor sites.
#include "calls/nvtx_paths.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <thread>

using namespace fp8scope::collector;

TEST_CASE("pushes and pops build the thread's range path, outermost first")
{
    CHECK(current_nvtx_path().empty());
    nvtx_path_push("train_step");
    nvtx_path_push("layers.3");
    nvtx_path_push("mlp.fc2");
    CHECK(current_nvtx_path() == "train_step/layers.3/mlp.fc2");
    nvtx_path_pop();
    CHECK(current_nvtx_path() == "train_step/layers.3");
    nvtx_path_push("attn");
    CHECK(current_nvtx_path() == "train_step/layers.3/attn");
    nvtx_path_pop();
    nvtx_path_pop();
    nvtx_path_pop();
    CHECK(current_nvtx_path().empty());
    nvtx_path_pop(); // unbalanced: ignored, as NVTX does
    CHECK(current_nvtx_path().empty());
}

TEST_CASE("each thread has its own path")
{
    nvtx_path_push("main");
    std::string seen_on_other = "unset";
    std::thread other([&] {
        nvtx_path_push("backward");
        seen_on_other = std::string(current_nvtx_path());
        nvtx_path_pop();
    });
    other.join();
    CHECK(seen_on_other == "backward");
    CHECK(current_nvtx_path() == "main");
    nvtx_path_pop();
}

TEST_CASE("a very deep or very long path is cut, and pops stay balanced")
{
    const std::string long_name(400, 'x');
    for (int i = 0; i < 100; ++i)
        nvtx_path_push(long_name);
    CHECK(current_nvtx_path().size() < 1024);
    CHECK(current_nvtx_path().starts_with(long_name + "/"));
    for (int i = 0; i < 99; ++i)
        nvtx_path_pop();
    CHECK(current_nvtx_path() == long_name);
    nvtx_path_pop();
    CHECK(current_nvtx_path().empty());
}
