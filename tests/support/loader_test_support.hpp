// Shared by the loader tests: scratch files, raw SQL on a written trace (to break it on purpose), and one
// scenario with at least one row of every kind, whose loaded content both formats must reproduce.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/common/error.hpp"
#include "scenario.hpp"

#include <string>

namespace fp8scope::testing {

// A fresh, empty directory under FP8SCOPE_TEST_TMP for one test.
std::string scratch_dir(const std::string& test_name);
void write_file(const std::string& path, const std::string& bytes);
// Runs `sql` on the file (created if missing) with a plain read-write connection; REQUIREs success.
void exec_sql(const std::string& path, const std::string& sql);

// Two GPUs, three host threads, kernels (one mangled, one from a graph, one orphan), runtime and driver API
// calls, one sync of every type, three copies (pinned, pageable, device-to-device over 4 GiB), a memset, NVTX
// ranges and a mark, two tensor sites with statistics (optional fields set and unset), scalars, step markers,
// overhead and dropped records. Rows are added out of time order where the loader must sort.
Scenario full_scenario();
GpuInfoRow full_scenario_second_gpu();
// The two tensor statistics rows of full_scenario(): 0 has every optional field set, 1 none.
TensorStatsRow full_scenario_stats(int which);

// Checks what both formats carry (kernels, API calls, syncs, copies, NVTX, GPUs, thread names) against the
// values full_scenario() wrote, field by field.
void check_common_content(const analyzer::TraceModel& model);

// REQUIREs an error with `code` whose message is one line, names `path`, and contains `fragment`.
void check_error(
    const Expected<analyzer::TraceModel>& result, ErrorCode code, const std::string& path, const std::string& fragment);

} // namespace fp8scope::testing
