// When a session ends (docs/collector.md "Process lifecycle"): atexit, SIGTERM/SIGINT, fork, and _exit all lead to
// Collector::stop() or to abandoning the session, without SQLite calls in signal handlers.
#pragma once

namespace fp8scope::collector {

class Collector;

// Registers atexit and pthread_atfork handlers and, for SIGTERM and SIGINT whose disposition is still the
// default, a handler that wakes a helper thread to finish the trace and then lets the signal kill the process as
// it would have. Handlers the application installed itself are left alone: its own exit path reaches atexit.
// The pipes are `c`'s (LifecyclePipes); Collector::wake_flusher() writes a zero byte on the wake pipe, the signal
// handler the signal's number. Call once per session, when it has started (CollectorPlatform::started).
void install_lifecycle_hooks(Collector& c);

} // namespace fp8scope::collector
