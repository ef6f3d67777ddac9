// Output file naming (spec "Trace format"): FP8SCOPE_OUTPUT is a pattern with %h (host), %p (pid), %r (rank from
// RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID; "0" when none), %n (a counter) and %% (a percent sign). The default,
// fp8scope-%h-%p.sqlite, gives one file per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fp8scope::collector {

inline constexpr std::string_view kDefaultOutputPattern = "fp8scope-%h-%p.sqlite";

struct OutputNameInputs {
    std::string host;
    int64_t pid = 0;
    std::optional<int32_t> rank;
};

// Expands the pattern for attempt `counter` (0, 1, ...). With %n in the pattern the counter goes there; without,
// attempts after the first insert "-<counter>" before the ".sqlite" extension (or at the end), so that a second
// process that expands to the same name never clobbers the first one's file.
std::string expand_output_pattern(std::string_view pattern, const OutputNameInputs& inputs, int counter);

// The rank from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID, and the world size from WORLD_SIZE,
// OMPI_COMM_WORLD_SIZE or SLURM_NTASKS; none when unset or not a number.
std::optional<int32_t> rank_from_environment();
std::optional<int32_t> world_size_from_environment();

} // namespace fp8scope::collector
