// Reading a per-rank JSON file for `--merge` (rank_summary_json.hpp): the file's size and syntax, where its rank
// summary is, and the checks across the files of one set. The fields themselves are read in rank_summary_json.cpp.
#include "rank_json/rank_summary_json.hpp"

#include "report/report_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>

namespace fp8scope::cli {

using namespace analyzer;
using json = nlohmann::json;

namespace {

Error invalid(const std::string& path, std::string_view what)
{
    return Error { ErrorCode::InvalidTrace, fmt::format("'{}': {}", path, what) };
}

} // namespace

Expected<RankSummary> read_rank_summary_file(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (error || !fs::exists(status))
        return make_error(ErrorCode::Io,
            fmt::format("cannot open '{}': {}", path, error ? error.message() : "No such file or directory"));
    if (!fs::is_regular_file(status))
        return std::unexpected(invalid(path, "not a regular file"));
    const auto too_large = [&] {
        return invalid(path,
            fmt::format("larger than {} MiB, the most a rank's JSON report may have", kMaxRankSummaryFileBytes >> 20));
    };
    if (const uintmax_t size = fs::file_size(path, error); !error && size > uintmax_t(kMaxRankSummaryFileBytes))
        return std::unexpected(too_large());
    std::ifstream in(path, std::ios::binary);
    std::string text;
    // Read to the end, one byte past the limit at most: the file may have grown since its size was taken.
    for (char buffer[1 << 16]; in.read(buffer, sizeof buffer) || in.gcount() > 0;) {
        text.append(buffer, static_cast<size_t>(in.gcount()));
        if (static_cast<int64_t>(text.size()) > kMaxRankSummaryFileBytes)
            return std::unexpected(too_large());
    }
    if (in.bad() || !in.is_open())
        return make_error(ErrorCode::Io, fmt::format("cannot read '{}'", path));
    try {
        const json document = json::parse(text);
        text = {};
        if (!document.is_object())
            return std::unexpected(invalid(path, "not a rank's JSON report: expected an object"));
        // The file's name in front of the reader's line.
        const auto named = [&](Expected<RankSummary> read) -> Expected<RankSummary> {
            if (!read)
                return std::unexpected(invalid(path, read.error().message));
            return read;
        };
        const auto schema = document.find("schema");
        if (schema != document.end() && *schema == kRankSummarySchema)
            return named(rank_summary_from_json(document, ""));
        const auto summary = document.find("rank_summary");
        if (summary != document.end())
            return named(rank_summary_from_json(*summary, "rank_summary"));
        if (schema != document.end() && *schema == kRanksJsonSchema)
            return std::unexpected(invalid(path,
                fmt::format(
                    "a report of several ranks ({}); --merge reads the reports of one rank each", kRanksJsonSchema)));
        return std::unexpected(invalid(path,
            "no rank_summary: not the output of 'fp8scope report TRACE --format json' (nor a bare rank summary)"));
    } catch (const json::parse_error& bad) {
        return std::unexpected(invalid(path, fmt::format("not valid JSON (error at byte {})", bad.byte)));
    } catch (const std::exception& bad) { // std::bad_alloc: too large for this machine's memory
        return std::unexpected(invalid(path, fmt::format("cannot read: {}", bad.what())));
    }
}

std::optional<std::string> check_rank_summary_set(
    std::span<const RankSummary> ranks, std::span<const std::string> files)
{
    if (ranks.empty())
        return std::nullopt;
    const auto [first, last] = std::minmax_element(ranks.begin(), ranks.end(),
        [](const RankSummary& a, const RankSummary& b) { return a.session_start_utc_ns < b.session_start_utc_ns; });
    const auto file = [&](auto rank) { return files[static_cast<size_t>(rank - ranks.begin())]; };
    // The true difference of two int64 fits a uint64.
    const uint64_t spread_ns
        = static_cast<uint64_t>(last->session_start_utc_ns) - static_cast<uint64_t>(first->session_start_utc_ns);
    if (spread_ns > (uint64_t { 1 } << 60))
        return fmt::format("'{}' and '{}' cannot be ranks of one job: their session starts are more than 2^60 ns (36 "
                           "years) apart",
            file(first), file(last));
    uint64_t collective_ns
        = 0; // each length is at most 2^54 (kMaxTraceTimeNs each way): the sum is checked before it can wrap
    for (auto rank = ranks.begin(); rank != ranks.end(); ++rank)
        for (const RankCollective& c : rank->collectives) {
            collective_ns += static_cast<uint64_t>(c.end_ns - c.start_ns);
            if (collective_ns > (uint64_t { 1 } << 62))
                return fmt::format(
                    "'{}': the rank summaries' collectives last more than 2^62 ns in all: not a job's", file(rank));
        }
    return std::nullopt;
}
} // namespace fp8scope::cli
