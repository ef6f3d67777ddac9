// The zoo's judge (docs/accuracy.md "How each cell is judged"): each workload recorded on a GPU by
// tests/gpu/check_zoo.py printed what it did (samples/traces/zoo/<name>.truth.json); the analyzer's answers on its
// trace are set against that truth, one cell per question a user asks of the report. A cell is right, wrong, or not
// judged (the workload planted nothing that question could be judged on); its text gives the figures either way.
#pragma once

#include <string>
#include <vector>

namespace fp8scope::zoo {

enum class Verdict { Right, Wrong, NotJudged };

struct Cell {
    std::string text;
    Verdict verdict = Verdict::NotJudged;
};

// The scoreboard's columns, in order.
// The numerics verdict (issue 43) is the FP8 run judged alone, without its reference. Fused bookkeeping (issue 44):
// a compiled job's Inductor kernels, classed by name, against what their generated source does. The compiled what-if
// (issue 44): an eager BF16 trace's FP8 what-if against the same job timed compiled.
// The idle, advice and straggler questions are asked twice of the same traces (issue 42): with the job's own step
// markers, and with them ignored (`--step-source auto`), as on a user's job that carries none.
inline constexpr const char* kColumns[] = { "steps", "boundaries", "idle by cause", "idle by cause, auto",
    "top recommendation", "top recommendation, auto", "straggler", "straggler, auto", "drift verdict",
    "numerics verdict", "recipe", "FP8 price", "fused bookkeeping", "compiled what-if" };
inline constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);

struct Row {
    std::string workload;
    std::string pattern;
    Cell cells[kColumnCount];
};

// A cell known to be wrong today (tests/zoo/known_wrong.txt: "workload | column | why", one a line, # comments):
// the zoo's tests pass with it wrong and fail once it is right, so that the list only shrinks and the scoreboard
// shows what is still wrong and why.
struct KnownWrong {
    std::string workload, column, why;
};
std::vector<KnownWrong> read_known_wrong(const std::string& path);

// Every workload in `dir` (one row per workload: a DDP job's ranks share a row), by name.
std::vector<std::string> zoo_workloads(const std::string& dir);

// Judges one workload. Throws std::runtime_error when its files cannot be read or analysed.
Row judge_workload(const std::string& dir, const std::string& workload);

// The scoreboard as Markdown: a table with one row per workload, each cell's figures with ✓ (right), ✗ (wrong) or
// – (not judged), and a last line that counts them.
std::string scoreboard_markdown(const std::vector<Row>& rows, const std::vector<KnownWrong>& known = {});

} // namespace fp8scope::zoo
