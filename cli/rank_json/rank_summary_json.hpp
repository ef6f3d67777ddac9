// One rank's RankSummary (fp8scope/analyzer/ranks/ranks.hpp) as JSON, and back: `fp8scope report TRACE --format json`
// writes it as its `rank_summary` object, and `fp8scope report --merge` / `check --merge` read it back to analyse the
// ranks of a job whose traces were analysed one by one, as independent jobs (docs/multi-rank.md). Writer and reader
// share one description of the fields (rank_summary_json.cpp; files and sets: rank_summary_file.cpp), so that a field
// added to one is added to the other.
//
// Integers are JSON integers and doubles nlohmann's shortest round-trip form, so a summary read back equals the one
// written, bit for bit: `report --merge` of the per-rank JSON files prints what `report A.sqlite B.sqlite` prints.
// The reader treats the file as untrusted input (docs/cli.md "Merging per-rank reports").
#pragma once

#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/common/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fp8scope::cli {

// The summary's own schema tag; a change that removes or renames a key raises the number.
inline constexpr const char* kRankSummarySchema = "fp8scope.rank_summary/2";
// The largest per-rank JSON file `--merge` reads: the parsed document takes several times its size in memory.
inline constexpr int64_t kMaxRankSummaryFileBytes = int64_t { 1 } << 30;

nlohmann::ordered_json rank_summary_json(const analyzer::RankSummary& summary);

// The summary in `value` (an object with `schema` kRankSummarySchema), checked: every field present with its type,
// times within analyzer::kMaxTraceTimeNs of the session start, durations not negative, ends not before starts,
// known enum names, the totals consistent. Error (InvalidTrace): one line naming the key at fault, e.g.
// "rank_summary.steps[2].end_ns: 5 is before start_ns 9".
// `where`: the object's key path in the file, for the messages ("" for a bare summary).
Expected<analyzer::RankSummary> rank_summary_from_json(
    const nlohmann::json& value, std::string_view where = "rank_summary");

// Reads `path`: the JSON of `fp8scope report TRACE --format json` (its `rank_summary`), or a bare rank summary. At
// most kMaxRankSummaryFileBytes. Errors name the file: Io when it cannot be read, InvalidTrace for anything else.
Expected<analyzer::RankSummary> read_rank_summary_file(const std::string& path);

// What the summaries of one set must satisfy beyond each file's checks, so that analyze_across_ranks() stays far from
// int64's limits: session starts at most 2^60 ns (36 years) apart, the collectives' lengths summed over every rank at
// most 2^62 ns. nullopt when they do; else one line naming the `files` (one per summary) at fault.
std::optional<std::string> check_rank_summary_set(
    std::span<const analyzer::RankSummary> ranks, std::span<const std::string> files);

} // namespace fp8scope::cli
