// What the fuzz targets (fuzz_*.cpp) share: the input as a file for the loader, the model's and the report's
// invariants, and the whole report path (analyze, render every format). A broken invariant is a finding like a crash:
// a loader that returns a silently wrong model is as much a bug as one that crashes (docs/reliability.md).
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fp8scope::fuzz {

// Prints "fuzz invariant broken: WHAT" on stderr and aborts, so that libFuzzer keeps the input as a crash.
[[noreturn]] void fail(std::string_view what);

// One file per process and tag, rewritten for every input: the loader reads a path, not bytes. It lies in /dev/shm
// (memory) when that exists, else in $TMPDIR or /tmp, and is removed, with any SQLite side file, on destruction.
class InputFile {
public:
    explicit InputFile(std::string_view tag);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    // Replaces the file's content with `bytes` and returns its path.
    const std::string& write(std::span<const uint8_t> bytes);
    // Removes the file and its SQLite side files (-wal, -shm, -journal), for a writer to create it anew; returns its
    // path.
    const std::string& clear() const;

private:
    std::string path_;
};

// The loader's promises (trace_model.hpp): equal column lengths, times in range with end >= start, kernels of one
// stream not overlapping outside graphs, string references in range and valid UTF-8, rows sorted by start, capture
// windows ordered and apart.
void check_model(const analyzer::TraceModel& model);

// Figures that must hold in any report: busy <= step time, idle = step - busy = sum of the causes, ratios in [0, 1].
void check_report(const analyzer::Report& report);

// analyze() with `options`, check_report(), then every report format the CLI writes (text, JSON, Markdown, HTML,
// JUnit). Returns the report so that a caller can go on (compare).
analyzer::Report exercise_report(const analyzer::TraceModel& model, const analyzer::ReportOptions& options = {});

// Splits a two-trace input: the first 4 bytes (little-endian) give the first part's length, taken modulo the bytes
// that follow plus one. Used by fuzz_compare and by the seed writer that builds its inputs.
std::pair<std::span<const uint8_t>, std::span<const uint8_t>> split_two(std::span<const uint8_t> input);

} // namespace fp8scope::fuzz
