// The process side of `fp8scope record`: where the collector library is, the environment that makes the command
// load it, and running the command with signals forwarded. No formatting here beyond one-line errors.
#pragma once

#include "fp8scope/common/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli {

// The collector library: $FP8SCOPE_LIBRARY if set, else <directory of this executable>/../lib/libfp8scope.so
// (the layout of both the build tree and an install). The result is absolute, so that a command that changes
// directory still finds it. The error message is the path that was tried.
Expected<std::string> locate_collector_library();
// What `record` says when the library is not at `library`: built without the collector (no CUDA toolkit when the
// build was configured) and no FP8SCOPE_LIBRARY set, how to get one; else where it looked.
std::string collector_missing_message(bool collector_built, const std::string& library, bool from_environment);

// The directory holding the `fp8scope` Python package (probes/python in the source tree): $FP8SCOPE_PYTHON if set,
// else <directory of this executable>/../share/fp8scope/python (a link to probes/python in the build tree, a copy in
// an install). Empty when it has no fp8scope/_boot/sitecustomize.py.
std::string locate_python_package();

// `existing` (a PYTHONPATH value) with `entries` in front, each once.
std::string prepend_python_path(std::string_view existing, const std::vector<std::string>& entries);

// `existing` (an LD_PRELOAD value: entries separated by ':' or ' ') with `library` in front, unless it is
// already one of the entries.
std::string prepend_preload(std::string_view existing, const std::string& library);

// Writes to stderr, ignoring errors: record's messages never change its exit code.
void print_to_stderr(std::string_view text);

// Sets `name` in this process's environment, which the command inherits.
void set_environment(const char* name, const std::string& value);

// How the command ended, in the shell's terms.
struct CommandOutcome {
    bool started = false; // false: it could not be executed (error already printed)
    int exit_code = 0; // its exit status; 128 + N when signal N ended it; 127 not found, 126 not executable
};

// Runs `command` (looked up in PATH like a shell does) as a child in this process's group, so that a terminal's
// Ctrl-C reaches it directly, and forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 that another
// process sends to `fp8scope record`. Waits for it to end. On return, this process's signal dispositions are
// as they were, except SIGPIPE, which stays ignored so that a closed stderr cannot kill record before it exits
// with the command's code.
CommandOutcome run_command(const std::vector<std::string>& command);

} // namespace fp8scope::cli
