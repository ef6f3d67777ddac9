// Loads a trace file into a TraceModel. The file is untrusted input: it is opened read-only, in SQLite's
// defensive mode with trusted_schema=OFF and extensions off, only real tables (never views) are read, and
// every value is range-checked. Any problem yields one Error whose message is a single line naming the file.
#pragma once

#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/common/error.hpp"

#include <string>

namespace fp8scope::analyzer {

// Reads an fp8scope trace (schema major <= schema::kMajorVersion) or an Nsight Systems SQLite export.
// ErrorCode::Io: missing, a directory, unreadable. ErrorCode::InvalidTrace: not SQLite, corrupt, truncated,
// not a trace, missing tables or columns, NULLs where values belong, negative durations, dangling string ids,
// out-of-range values. ErrorCode::NewerVersion: schema major newer than this build.
Expected<TraceModel> load_trace(const std::string& path);

// The same, reporting progress to `progress` (by rows read against the rows the tables hold, then the final
// sorting and the integrity check) and stopping with ErrorCode::Cancelled, message "loading trace 'P' cancelled",
// when it returns false. An empty hook is the plain load_trace().
Expected<TraceModel> load_trace(const std::string& path, const ProgressHook& progress);

} // namespace fp8scope::analyzer
