#include "rank_test_traces.hpp"

#include <catch2/catch.hpp>

namespace fp8scope::cli_test {

using testing::kAllGather;
using testing::RankTrace;

void write_rank(const RankTrace& trace, const std::string& path)
{
    const auto written = trace.s.write_fp8scope(path, true);
    INFO((written ? std::string() : written.error().message));
    REQUIRE(written);
}

std::vector<std::string> write_straggler_ranks(const std::string& dir)
{
    RankTrace r0(0, { 0, 10'000, 20'000 }, 3), r1(1, { 0, 10'000, 20'000 }, 3), r2(2, { 0, 10'000, 20'000 }, 3);
    r0.kernel(1000, 3000); // compute: 2500 ns on rank 0 (with the one below), 1000 ns on rank 1, 3500 ns on rank 2
    r1.kernel(1000, 2000);
    r0.collective(4000, 7000);
    r0.kernel(7500, 8000); // rank 0's gap [3000, 7500) is mostly its all-reduce: idle time of cause comm, 4500 ns
    r1.collective(4100, 7000);
    r2.kernel(1000, 4500);
    r2.collective(4600, 7000);
    r0.collective(16'000, 17'000, kAllGather);
    r1.collective(16'000, 19'000, kAllGather);
    r2.collective(18'500, 19'000, kAllGather);
    std::vector<std::string> paths;
    for (const RankTrace* r : { &r0, &r1, &r2 }) {
        paths.push_back(dir + "/rank" + std::to_string(paths.size()) + ".sqlite");
        write_rank(*r, paths.back());
    }
    return paths;
}

std::vector<std::string> write_compute_only_ranks(const std::string& dir)
{
    std::vector<std::string> paths;
    for (const int32_t rank : { 0, 1 }) {
        RankTrace trace(rank);
        trace.kernel(1000, 2000);
        paths.push_back(dir + "/r" + std::to_string(rank) + ".sqlite");
        write_rank(trace, paths.back());
    }
    return paths;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more)
{
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

} // namespace fp8scope::cli_test
