// What the collector reads about its process: the FP8SCOPE_* environment variables, the host name, the command line
// and the CUDA libraries' versions (the trace's meta), and the clock CUPTI's timestamps equal.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace fp8scope::collector {

// A yes/no variable: 1, y, Y, t or T at its start is true; unset or empty gives `fallback`.
bool env_flag(const char* name, bool fallback);
// A variable's text; unset or empty gives `fallback`.
std::string env_text(const char* name, const char* fallback);
// A whole number in lo..hi; unset or empty gives `fallback`, and anything else too, with one warning.
size_t env_size(const char* name, size_t fallback, size_t lo, size_t hi);

std::string host_name();
// /proc/self/cmdline with its arguments joined by spaces.
std::string command_line();
// Calls `int fn(int*)` (cuDriverGetVersion, cudaRuntimeGetVersion) in an already loaded library whose file
// name contains `library`; 0 when there is none.
int loaded_library_version(const char* library, const char* function);

// getpid() without a system call (glibc caches no pid since 2.25, and the callbacks ask on every traced call):
// read once, and again in a fork's child by a pthread_atfork handler registered before the first read.
pid_t process_id();

// CLOCK_REALTIME in ns: CUPTI's clock on Linux by default (shared/reference/nsys_cupti.md §4.4).
int64_t realtime_ns();

} // namespace fp8scope::collector
