// Prints the zoo's scoreboard (docs/accuracy.md) for the traces in a folder:
//   fp8scope_zoo_scoreboard [DIR]        (default: samples/traces/zoo of the source tree)
// Exit codes: 0 every judged cell right, 1 a cell wrong, 3 a workload could not be read or analysed.
#include "zoo_judge.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv)
{
    const std::string dir = argc > 1 ? argv[1] : FP8SCOPE_ZOO_DIR;
    std::vector<fp8scope::zoo::Row> rows;
    try {
        for (const std::string& name : fp8scope::zoo::zoo_workloads(dir))
            rows.push_back(fp8scope::zoo::judge_workload(dir, name));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8scope_zoo_scoreboard: %s\n", e.what());
        return 3;
    }
    std::fputs(fp8scope::zoo::scoreboard_markdown(rows).c_str(), stdout);
    for (const auto& row : rows)
        for (const auto& c : row.cells)
            if (c.verdict == fp8scope::zoo::Verdict::Wrong)
                return 1;
    return 0;
}
