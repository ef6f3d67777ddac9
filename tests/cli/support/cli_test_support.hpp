// Shared by the CLI tests: scratch files, running the built fp8scope, raw SQL edits that break a written trace
// on purpose, and one small scenario whose figures the tests know.
#pragma once

#include "scenario.hpp"
#include "subprocess.hpp"

#include <string>
#include <vector>

namespace fp8scope::cli_test {

// A fresh, empty directory under FP8SCOPE_TEST_TMP/cli for one test.
std::string scratch_dir(const std::string& test_name);
void write_file(const std::string& path, const std::string& bytes);

// Runs the fp8scope executable under test with `args`.
testing::ProcessResult run_fp8scope(const std::vector<std::string>& args);
// run_fp8scope(), REQUIREing exit code 0 (stderr is shown when not); returns stdout.
std::string run_fp8scope_ok(const std::vector<std::string>& args);
// The whole file, or "" when it cannot be read.
std::string read_text_file(const std::string& path);
// The lines of `text`, without their '\n'.
std::vector<std::string> lines_of(const std::string& text);
// How many times `what` occurs in `text` (overlapping occurrences counted).
size_t occurrences(const std::string& text, const std::string& what);

// Runs `sql` on the file with a plain read-write connection; REQUIREs success.
void exec_sql(const std::string& path, const std::string& sql);
// Rebuilds `table` with the same columns and types but without NOT NULL constraints, as a hostile or buggy
// writer could have made it, so that a test can then store a NULL where the schema requires a value.
void drop_not_null(const std::string& path, const std::string& table);

// The figures of small_scenario(), checked by the tests.
struct SmallScenarioFacts {
    static constexpr const char* kGpuName = "NVIDIA H100 80GB HBM3";
    static constexpr const char* kHost = "gpu-node-7";
    static constexpr const char* kCommandLine = "python train.py --fp8";
    static constexpr int64_t kKernels = 3;
    static constexpr int64_t kApiCalls = 4; // three launches and one cudaStreamSynchronize
    static constexpr int64_t kSyncs = 1;
    static constexpr int64_t kFirstNs = 1'000;
    static constexpr int64_t kLastNs = 71'000;
    static constexpr int32_t kSmCount = 132;
    static constexpr int64_t kTotalMemoryBytes = 85'520'809'984;
};

// One H100, one thread: three kernel launches (an FP8 GEMM, an amax and a cast) and a stream sync.
testing::Scenario small_scenario();
// small_scenario() written with the real writer; REQUIREs success.
void write_small_trace(const std::string& path, bool finished = true);

// REQUIREs what the CLI promises for a bad trace: exit code 3, nothing on stdout, exactly one line on stderr
// that starts with "fp8scope: error: ".
void check_bad_trace(const testing::ProcessResult& result);

} // namespace fp8scope::cli_test
