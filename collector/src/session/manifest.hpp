// FP8SCOPE_MANIFEST (set by `fp8scope record`): one line per process that initialized CUDA, either the absolute
// path of its trace, or "!<pid>\t<reason>" when it could not be traced (it has printed its warning already).
#pragma once

#include <string>

namespace fp8scope::collector {

// `path` made absolute from the working directory now.
std::string absolute(const std::string& path);

// Appends one line (with its newline) in one write; nothing without FP8SCOPE_MANIFEST.
void append_line_to_manifest(const std::string& line);
// The trace's absolute path.
void append_to_manifest(const std::string& path);

// Prints the one warning of a process that is left untraced, and tells `fp8scope record` about it.
void not_traced(const std::string& reason);

} // namespace fp8scope::collector
