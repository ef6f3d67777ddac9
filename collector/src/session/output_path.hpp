// Output file naming (docs/collector.md "Environment"): FP8SCOPE_OUTPUT is a pattern with %h (host), %p (pid), %r (the
// rank), %n (a counter) and %% (a percent sign). The default, fp8scope-%h-%p.sqlite, gives one file per process.
//
// %r is the rank from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID; in a process that has none of them but a
// LOCAL_RANK (single-node launchers that set only that), the local rank; in a process with neither, "norank".
// A process without a rank is never named as rank 0: torchrun's launcher process may initialize CUDA itself, and
// with "0" it took rank0.sqlite, so that rank 0's own trace became rank0-1.sqlite (docs/collector.md "Attaching it").
#pragma once

#include "fp8scope/format/trace_db.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::collector {

inline constexpr std::string_view kDefaultOutputPattern = "fp8scope-%h-%p.sqlite";
// What %r gives in a process with no rank (nor local rank) in its environment.
inline constexpr std::string_view kNoRankText = "norank";

struct OutputNameInputs {
    std::string host;
    int64_t pid = 0;
    std::optional<int32_t> rank;
    std::optional<int32_t> local_rank; // used for %r only when `rank` is unset
};

// Expands the pattern for attempt `counter` (0, 1, ...). With %n in the pattern the counter goes there; without,
// attempts after the first insert "-<counter>" before the ".sqlite" extension (or at the end), so that a second
// process that expands to the same name never clobbers the first one's file.
std::string expand_output_pattern(std::string_view pattern, const OutputNameInputs& inputs, int counter);

// Creates the trace under the first name of attempts 0, 1, ... that nothing holds (parent folders made first), and
// sets `path` to it. A name held by anything, a file, a directory or a symlink (dangling or not), is skipped: an
// existing file is never overwritten and a symlink never followed (TraceDb::create's O_EXCL|O_NOFOLLOW closes the
// race with a name planted between the check and the create). Folders above the file are used as they are.
// `options` go to TraceDb::create (the collector's write-error warning).
Expected<std::unique_ptr<TraceDb>> create_trace_file(std::string_view pattern, const OutputNameInputs& inputs,
    const SessionInfo& info, std::string& path, const TraceDbOptions& options = {});

// The rank from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID, and the world size from WORLD_SIZE,
// OMPI_COMM_WORLD_SIZE or SLURM_NTASKS; none when unset or not a number.
std::optional<int32_t> rank_from_environment();
std::optional<int32_t> world_size_from_environment();
// LOCAL_RANK (torchrun, torch.distributed.launch, DeepSpeed, Accelerate); none when unset or not a number.
std::optional<int32_t> local_rank_from_environment();

} // namespace fp8scope::collector
