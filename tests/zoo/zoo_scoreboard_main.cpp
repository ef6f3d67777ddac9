// Prints the zoo's scoreboard (docs/accuracy.md) for the traces in a folder:
//   fp8scope_zoo_scoreboard [DIR]        (default: samples/traces/zoo of the source tree)
// Exit codes: 0 every judged cell right or listed in tests/zoo/known_wrong.txt, 1 a cell wrong and not listed,
// 3 a workload could not be read or analysed. The what-if's GEMM tables come from the build tree (build_data_dir.hpp).
#include "build_data_dir.hpp"
#include "zoo_judge.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

int main(int argc, char** argv)
{
    fp8scope::testing::use_build_data_dir();
    const std::string dir = argc > 1 ? argv[1] : FP8SCOPE_ZOO_DIR;
    std::vector<fp8scope::zoo::Row> rows;
    std::vector<fp8scope::zoo::KnownWrong> known;
    try {
        known = fp8scope::zoo::read_known_wrong(FP8SCOPE_ZOO_KNOWN_WRONG);
        for (const std::string& name : fp8scope::zoo::zoo_workloads(dir))
            rows.push_back(fp8scope::zoo::judge_workload(dir, name));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8scope_zoo_scoreboard: %s\n", e.what());
        return 3;
    }
    std::fputs(fp8scope::zoo::scoreboard_markdown(rows, known).c_str(), stdout);
    int status = 0;
    for (const auto& row : rows)
        for (size_t i = 0; i < fp8scope::zoo::kColumnCount; ++i)
            if (row.cells[i].verdict == fp8scope::zoo::Verdict::Wrong
                && std::none_of(known.begin(), known.end(), [&](const auto& k) {
                       return k.workload == row.workload && k.column == fp8scope::zoo::kColumns[i];
                   })) {
                std::fprintf(stderr, "fp8scope_zoo_scoreboard: %s: %s is wrong and not in known_wrong.txt\n",
                    row.workload.c_str(), fp8scope::zoo::kColumns[i]);
                status = 1;
            }
    return status;
}
