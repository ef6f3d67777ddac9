// When a session ends (docs/collector.md "Process lifecycle"): atexit, SIGTERM/SIGINT, fork, and _exit all lead to
// stop_session() or to abandoning the session, without SQLite calls in signal handlers.
#pragma once

namespace fp8scope::collector {

// Registers atexit and pthread_atfork handlers and, for SIGTERM and SIGINT whose disposition is still the
// default, a handler that wakes a helper thread to finish the trace and then lets the signal kill the process as
// it would have. Handlers the application installed itself are left alone: its own exit path reaches atexit.
// Call once per session, from start_session().
void install_lifecycle_hooks();

// Wakes the flusher thread now (a zero byte on its wake pipe; the signal handler writes the signal's number), so that
// it looks again at what it waits for: a capture detach that became due earlier. No-op before the hooks exist.
void wake_flusher();

} // namespace fp8scope::collector
