// The per-rank traces the CLI's multi-rank tests share (report_ranks_test.cpp, report_merge_test.cpp): written by the
// scenario builder (tests/support/scenario/rank_scenario.hpp) into a test's scratch directory, with figures the tests
// know.
#pragma once

#include "rank_scenario.hpp"

#include <string>
#include <vector>

namespace fp8scope::cli_test {

// The trace written with the real writer; REQUIREs success.
void write_rank(const testing::RankTrace& trace, const std::string& path);

// Three ranks of one host, steps 1 and 2 of 10 us. Step 1: rank 2's compute runs long and it arrives at the all-reduce
// 600 ns after rank 0 and 500 ns after rank 1. Step 2: rank 2 arrives at the all-gather last again; rank 1 waits
// 2500 ns, rank 0 1000 ns (its whole kernel). Returns dir/rank0.sqlite, rank1 and rank2.
std::vector<std::string> write_straggler_ranks(const std::string& dir);

// Two ranks of world size 2 with one compute kernel each and no collective: dir/r0.sqlite and dir/r1.sqlite.
std::vector<std::string> write_compute_only_ranks(const std::string& dir);

// `args` and then `more`: a command line and the options a test adds to it.
std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more);

} // namespace fp8scope::cli_test
