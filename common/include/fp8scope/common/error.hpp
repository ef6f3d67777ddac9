// Errors are values (Perfetto trace processor style): functions that can fail on bad input or I/O return
// Expected<T>, and nothing throws across module boundaries.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace fp8scope {

enum class ErrorCode {
    Io, // the file cannot be opened, created or written
    InvalidTrace, // the file is not a trace, or a trace with bad content
    NewerVersion, // the trace's schema major version is newer than this build reads
    Usage, // a caller passed an invalid argument
    Cancelled, // the caller's progress hook asked to stop (fp8scope/analyzer/model/progress.hpp); no partial result is
               // returned
    Unavailable, // something the operation needs is missing on this machine: a GPU, its driver, a CUDA library
};

struct Error {
    ErrorCode code;
    std::string message; // one line, no trailing newline, names the file or value at fault
};

template <class T> using Expected = std::expected<T, Error>;

inline std::unexpected<Error> make_error(ErrorCode code, std::string message)
{
    return std::unexpected(Error { code, std::move(message) });
}

} // namespace fp8scope
