// Runs a program as a child process and captures what it prints, so CLI tests see exactly what a user sees:
// stdout, stderr and the exit code. posix_spawn with pipes, never system(): no shell between test and program.
#pragma once

#include <string>
#include <vector>

namespace fp8scope::testing {

struct ProcessResult {
    int exit_code = -1; // the exit status, or 128 + signal number when a signal killed the child (as shells do)
    bool signaled = false;
    std::string out;
    std::string err;
};

// argv[0] is the program path. Both pipes are drained concurrently (poll), so a child that writes a lot to one
// of them cannot deadlock against a parent blocked on the other.
ProcessResult run_process(const std::vector<std::string>& argv);

// Count of '\n' in text.
size_t line_count(const std::string& text);

} // namespace fp8scope::testing
