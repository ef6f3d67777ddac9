// Reading a trace where nothing can be written: a child process that sees the trace's directory read-only, either by
// permissions (as uid/gid 65534 when the tests run as root, since root ignores them) or through a read-only bind
// mount in a mount namespace of its own. And writing one where the disk fills: a child with a small tmpfs on a
// directory. The child reports through a pipe; the parent asserts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace fp8scope::testing {

enum class ReadOnlyView {
    Permissions, // the directory 0555 and its files 0444 while the child runs; the child drops root
    Mount, // the directory bind-mounted read-only over itself (EROFS for everyone, root included)
};

struct ChildReport {
    bool set_up = false; // false: the view could not be made here; `text` says why
    std::string text; // what `read` returned, or why the view could not be made
};

// Forks; the child makes `dir` read-only for itself as `view` says, checks that creating a file there fails, runs
// `read` and sends back its result.
ChildReport read_in_child(const std::string& dir, ReadOnlyView view, const std::function<std::string()>& read);

// Forks; the child mounts a tmpfs of `bytes` on `dir` in a mount namespace of its own (nothing of it shows outside,
// and it is gone when the child ends), runs `work` and sends back its result.
ChildReport run_on_small_tmpfs(const std::string& dir, int64_t bytes, const std::function<std::string()>& work);

// Every file of `dir` by name, with its bytes: equal before and after a read means nothing was created, removed or
// changed beside the trace.
std::map<std::string, std::string> directory_snapshot(const std::string& dir);

// Catch2 2.x has no SKIP: prints `reason` and ends the test process with 77, which CTest shows as skipped
// (SKIP_RETURN_CODE 77 on the discovered tests), never as passed.
[[noreturn]] void skip_test(const std::string& reason);

} // namespace fp8scope::testing
