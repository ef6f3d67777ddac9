// `fp8scope calibrate [TRACE] [-o FILE]` (docs/cli.md "calibrate"): FP8 against BF16 GEMM time measured with
// cuBLASLt on this machine's GPU, for the shapes of TRACE (or the standard sweep), written as the GEMM table that
// `report --fp8-whatif --gemm-table FILE` reads.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace fp8scope::cli {

struct CalibrateOptions {
    std::string trace_path; // optional: measure the GEMM shapes its tensor statistics name
    std::string output = "gemm_table.json"; // -o: the table file
    bool sweep = false; // --sweep: the standard sweep as well (alone when there is no trace)
    int device = 0;
    int reps = 11;
    std::string cublaslt; // --cublaslt PATH
    bool no_progress = false;
};

CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& options);

// Measures and writes the table. Returns an ExitCode: 0, 2 usage, 3 bad trace, 69 no GPU/driver/cuBLASLt or a CUDA
// failure, 74 the table or stdout cannot be written.
int run_calibrate(const CalibrateOptions& options);

} // namespace fp8scope::cli
