// Exit codes of the fp8scope CLI (spec "CLI conventions"; documented in docs/cli.md).
#pragma once

namespace fp8scope::cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitCheckFailed = 1, // `check`: a budget failed
    kExitUsage = 2, // bad arguments: unknown subcommand or option, missing argument, bad value
    kExitBadTrace = 3, // the trace cannot be read or is invalid: one line on stderr, nothing on stdout
    // A bug in fp8scope itself (an exception nobody expected). 70 is EX_SOFTWARE of sysexits.h, so it cannot be
    // mistaken for a verdict on the trace.
    kExitInternal = 70,
    // `calibrate`: no GPU, CUDA driver or cuBLASLt to measure with, or a CUDA call failed during the measurement
    // (out of GPU memory). 69 is EX_UNAVAILABLE of sysexits.h.
    kExitUnavailable = 69,
    // The report could not be written to stdout (disk full, closed descriptor). 74 is EX_IOERR of sysexits.h.
    kExitOutput = 74,
};

} // namespace fp8scope::cli
