// One CTest per zoo workload (tests/zoo/CMakeLists.txt registers `zoo/<name>` with the workload's name as the
// argument): every cell the judge can judge on that workload must be right (docs/accuracy.md). And the scoreboard in
// docs/accuracy.md must be the one these traces give, so that the published figures are the tested ones.
#include "zoo_judge.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace fp8scope::zoo;

namespace {

std::string workload_under_test()
{
    const char* name = std::getenv("FP8SCOPE_ZOO_WORKLOAD");
    return name ? name : "";
}

} // namespace

TEST_CASE("zoo: every judged cell of the workload is right", "[zoo]")
{
    const std::string name = workload_under_test();
    if (name.empty())
        SUCCEED("run by CTest as zoo/<name>, which sets FP8SCOPE_ZOO_WORKLOAD");
    const std::vector<KnownWrong> known = read_known_wrong(FP8SCOPE_ZOO_KNOWN_WRONG);
    for (const std::string& workload : name.empty() ? zoo_workloads(FP8SCOPE_ZOO_DIR) : std::vector { name }) {
        const Row row = judge_workload(FP8SCOPE_ZOO_DIR, workload);
        for (size_t i = 0; i < kColumnCount; ++i) {
            const bool listed = std::any_of(known.begin(), known.end(),
                [&](const KnownWrong& k) { return k.workload == workload && k.column == kColumns[i]; });
            INFO(workload << ": " << kColumns[i] << ": " << row.cells[i].text
                          << (listed ? " (listed in tests/zoo/known_wrong.txt: remove it once right)" : ""));
            // Wrong only where known to be, and known only where still wrong: the list only shrinks.
            CHECK((row.cells[i].verdict == Verdict::Wrong) == listed);
        }
    }
}

TEST_CASE("zoo: docs/accuracy.md holds the scoreboard these traces give", "[zoo][docs]")
{
    std::vector<Row> rows;
    for (const std::string& workload : zoo_workloads(FP8SCOPE_ZOO_DIR))
        rows.push_back(judge_workload(FP8SCOPE_ZOO_DIR, workload));
    REQUIRE(rows.size() >= 20);
    const std::string table = scoreboard_markdown(rows, read_known_wrong(FP8SCOPE_ZOO_KNOWN_WRONG));
    std::ifstream in(FP8SCOPE_ACCURACY_MD);
    REQUIRE(in);
    std::stringstream doc;
    doc << in.rdbuf();
    INFO("regenerate with: build/test/tests/zoo/fp8scope_zoo_scoreboard, between the scoreboard markers\n" << table);
    CHECK(doc.str().find(table) != std::string::npos);
}
