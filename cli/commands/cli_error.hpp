// How a command fails, as a value (docs/architecture.md "Errors are values"): the exit code it ends with and the one
// line that says why. The shared steps (trace_args.hpp, compare_command.hpp, rank_merge.hpp) return it instead of
// printing; the command's run_*() prints it once, with print_failure() (command_support.hpp).
#pragma once

#include "commands/exit_codes.hpp"

#include "fp8scope/common/error.hpp"

#include <expected>
#include <string>
#include <utility>

namespace fp8scope::cli {

struct CliError {
    int exit_code; // kExitUsage, kExitBadTrace (exit_codes.hpp)
    std::string message; // one line, without the "fp8scope: error: " or "fp8scope: usage error: " prefix
};

template <class T> using CliExpected = std::expected<T, CliError>;

inline std::unexpected<CliError> cli_failure(int exit_code, std::string message)
{
    return std::unexpected(CliError { exit_code, std::move(message) });
}

// The one place an analyzer or reader error gets its exit code (docs/cli.md "Exit codes"): ErrorCode::Usage (a
// selection that leaves a rank nothing) is a usage error; every other code is input the CLI cannot read. (Cancelled
// does not reach here: the CLI's progress hooks never cancel.)
inline CliError to_cli_error(Error error)
{
    return { error.code == ErrorCode::Usage ? kExitUsage : kExitBadTrace, std::move(error.message) };
}

} // namespace fp8scope::cli
