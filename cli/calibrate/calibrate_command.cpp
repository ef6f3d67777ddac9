// `fp8scope calibrate` (calibrate_command.hpp): the trace's GEMM shapes from the analyzer, their times from the GEMM
// timer (calibrate/, which dlopens the CUDA driver and cuBLASLt), the table in gemm_table_json's format.
#include "calibrate/calibrate_command.hpp"

#include "commands/command_support.hpp"
#include "commands/exit_codes.hpp"

#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"
#include "fp8scope/present/units.hpp"
#ifdef FP8SCOPE_HAVE_CALIBRATE
#include "fp8scope/calibrate/gemm_timer.hpp"
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <unistd.h>

namespace fp8scope::cli {
namespace {

constexpr const char* kCalibrateExamples = R"(Examples:
  fp8scope calibrate bf16-run.sqlite -o gemm_table.json
  fp8scope report bf16-run.sqlite --fp8-whatif --gemm-table gemm_table.json
  fp8scope calibrate --sweep -o h100.json        (the shipped table's 252 shapes)

With TRACE, the shapes are those its tensor statistics name (a trace recorded with statistics on: the default
of fp8scope record); a trace without them falls back to the standard sweep, with a warning. Each shape is timed
in BF16, FP8 tensorwise and FP8 rowwise with cuBLASLt: a CUDA graph of 20 calls, median of --reps replays.
Nothing is linked: libcuda.so.1 and cuBLASLt are opened at run time (FP8SCOPE_CUBLASLT or --cublaslt name it).

Exit codes: 0 ok, 2 usage error, 3 unreadable or invalid trace, 69 no GPU, CUDA driver or cuBLASLt (or a CUDA
call failed while measuring), 74 the table or stdout cannot be written, 70 internal error.
The table's format: docs/cli.md "calibrate".
)";

std::string today()
{
    const std::time_t now = std::time(nullptr);
    std::tm utc {};
    gmtime_r(&now, &utc);
    char text[16] = {};
    std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
    return text;
}

std::string shape_text(int64_t m, int64_t n, int64_t k)
{
    return fmt::format("{}x{}x{}", m, n, k);
}

} // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& options)
{
    CLI::App* c = app.add_subcommand(
        "calibrate", "Measure FP8 against BF16 GEMM time on this GPU: the GEMM table of report --fp8-whatif");
    c->add_option("TRACE", options.trace_path, "A BF16 run's trace: measure the GEMM shapes it names");
    c->add_option("-o,--output", options.output, "The table file to write")->default_str("gemm_table.json");
    c->add_flag("--sweep", options.sweep, "Measure the standard sweep (252 shapes) as well as the trace's");
    c->add_option("--device", options.device, "CUDA device ordinal")->check(CLI::NonNegativeNumber)->default_str("0");
    c->add_option("--reps", options.reps, "Timed replays per shape and type (median kept)")
        ->check(CLI::Range(1, 1000))
        ->default_str("11");
    c->add_option("--cublaslt", options.cublaslt,
        "The cuBLASLt library to open (default: FP8SCOPE_CUBLASLT, then "
        "libcublasLt.so.13 and the CUDA directories)");
    c->add_flag("--no-progress", options.no_progress, "No progress line on stderr");
    c->footer(kCalibrateExamples);
    return c;
}

int run_calibrate(const CalibrateOptions& options)
{
#ifndef FP8SCOPE_HAVE_CALIBRATE
    (void)options;
    print_error("calibrate: this fp8scope was built without the CUDA headers (FP8SCOPE_BUILD_CALIBRATE=OFF), so it "
                "cannot measure GEMMs");
    return kExitUnavailable;
#else
    std::vector<analyzer::TraceGemmShape> traced;
    if (!options.trace_path.empty()) {
        CliExpected<analyzer::TraceModel> model = load_trace_model(options.trace_path);
        if (!model)
            return print_failure("calibrate", model.error());
        traced = analyzer::trace_gemm_shapes(*model);
        if (traced.empty())
            print_warning(fmt::format("calibrate: '{}' names no GEMM shape (recorded without tensor statistics): "
                                      "measuring the standard sweep",
                options.trace_path));
    }
    std::vector<calibrate::GemmShape> shapes;
    for (const analyzer::TraceGemmShape& s : traced)
        shapes.push_back({ s.m, s.n, s.k });
    if (options.sweep || traced.empty())
        for (const calibrate::GemmShape& s : calibrate::standard_sweep())
            if (std::ranges::find(shapes, s) == shapes.end())
                shapes.push_back(s);

    const bool show_progress = !options.no_progress && isatty(STDERR_FILENO);
    const auto started = std::chrono::steady_clock::now();
    const calibrate::TimerOptions timer {
        .device = options.device, .reps = options.reps, .cublaslt_path = options.cublaslt
    };
    const auto measured = calibrate::time_gemms(shapes, timer, [&](size_t done, size_t total) {
        if (show_progress)
            std::fprintf(stderr, "\rcalibrate: %zu/%zu shapes", done, total);
    });
    if (show_progress)
        std::fprintf(stderr, "\r\033[K");
    if (!measured) {
        const ErrorCode code = measured.error().code;
        const int exit_code = code == ErrorCode::Usage ? kExitUsage : kExitUnavailable;
        return print_failure("calibrate", CliError { exit_code, measured.error().message });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    analyzer::GemmTable table { measured->gpu, today(), measured->method, {} };
    for (const calibrate::GemmTiming& t : measured->timings)
        table.rows.push_back({ t.shape.m, t.shape.n, t.shape.k, t.bf16_ns, t.fp8_tensorwise_ns, t.fp8_rowwise_ns });
    nlohmann::ordered_json extra;
    extra["tool"] = "fp8scope calibrate " FP8SCOPE_VERSION;
    extra["cublaslt"] = measured->cublaslt;
    if (!options.trace_path.empty())
        extra["trace"] = options.trace_path;
    if (!write_text_file(options.output, analyzer::gemm_table_json(table, extra).dump(1) + "\n"))
        return kExitOutput;

    std::vector<double> speedups;
    for (const analyzer::GemmTimeRow& r : table.rows)
        speedups.push_back(static_cast<double>(r.bf16_ns) / static_cast<double>(r.fp8_tensorwise_ns));
    std::ranges::sort(speedups);
    std::string text = fmt::format("fp8scope calibrate: {} with {}\n", table.gpu, measured->cublaslt);
    text += fmt::format("{} GEMM shapes measured in {:.1f} s; FP8 tensorwise speed-up over BF16: min {:.2f}x, "
                        "median {:.2f}x, max {:.2f}x\n",
        table.rows.size(), seconds, speedups.front(), speedups[speedups.size() / 2], speedups.back());
    if (!traced.empty()) {
        std::map<std::array<int64_t, 3>, const analyzer::GemmTimeRow*> rows;
        for (const analyzer::GemmTimeRow& r : table.rows)
            rows.emplace(std::array { r.m, r.n, r.k }, &r);
        text += fmt::format("\nThe trace's GEMMs ({}):\n", present::printable(options.trace_path));
        text += fmt::format("  {:<20} {:>8} {:>11} {:>11} {:>11} {:>9}\n", "m x n x k", "sampled", "BF16", "FP8 tensor",
            "FP8 row", "speed-up");
        for (const analyzer::TraceGemmShape& s : traced) {
            const analyzer::GemmTimeRow& r = *rows.at({ s.m, s.n, s.k });
            text += fmt::format("  {:<20} {:>8} {:>11} {:>11} {:>11} {:>8.2f}x\n", shape_text(s.m, s.n, s.k),
                s.sampled_calls, present::compact_duration(static_cast<double>(r.bf16_ns)),
                present::compact_duration(static_cast<double>(r.fp8_tensorwise_ns)),
                r.fp8_rowwise_ns ? present::compact_duration(static_cast<double>(*r.fp8_rowwise_ns)) : "-",
                static_cast<double>(r.bf16_ns) / static_cast<double>(r.fp8_tensorwise_ns));
        }
        text += "  (sampled: the trace's samples of that shape; m x n x k as cuBLAS was called, column-major)\n";
    }
    text += fmt::format(
        "\nWrote {}. Use it: fp8scope report TRACE --fp8-whatif --gemm-table {}\n", options.output, options.output);
    return write_stdout(text);
#endif
}

} // namespace fp8scope::cli
