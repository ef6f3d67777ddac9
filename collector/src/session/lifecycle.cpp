#include "session/lifecycle.hpp"

#include "session/collector.hpp"
#include "session/warn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace fp8scope::collector {
namespace {

// Two helper threads, both started with every signal blocked:
//  - the flusher pushes CUPTI's pending records to the writer every 500 ms (cuptiActivityFlushPeriod only
//    delivers *full* buffers, so a slow job killed with SIGKILL would otherwise lose everything), and finishes
//    the trace when a terminating signal arrives;
//  - the watchdog makes sure such a signal still kills the process within 5 s if finishing hangs.
//
// The signal handler only writes a byte to a pipe and returns (docs/collector.md "Process lifecycle": no SQLite in
// signal handlers). It must not wait: the signal may have interrupted a thread inside CUPTI or the driver, and the
// flush would then wait on that thread. The job runs on for the few hundred milliseconds finishing takes, then dies of
// the signal exactly as it would have without fp8scope.
// The pipes are the collector's (LifecyclePipes); the threads are given it, the signal handler finds it through
// Collector::get().
int flush_period_ms()
{
    // FP8SCOPE_FLUSH_PERIOD_MS: 0 switches the periodic flush off (records then reach the file when CUPTI fills
    // a buffer, and at exit).
    const char* text = std::getenv("FP8SCOPE_FLUSH_PERIOD_MS");
    if (!text || !*text)
        return 500;
    const int value = std::atoi(text);
    return value <= 0 ? -1 : std::max(value, 10);
}
constexpr int kFinishTimeoutMs = 5000;

const char* signal_reason(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal";
}

// Restores the default action and sends the signal to the process; our threads block every signal, so an
// application thread takes it, and the process dies of it.
void die_of(int sig)
{
    struct sigaction dfl { };
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::kill(::getpid(), sig);
}

void* flusher_main(void* arg)
{
    Collector& c = *static_cast<Collector*>(arg);
    LifecyclePipes& pipes = c.lifecycle();
    const int period_ms = flush_period_ms();
    for (;;) {
        pollfd wake { pipes.wake[0], POLLIN, 0 };
        // A time capture window (--delay, --duration) opens and closes on this thread: it wakes at its edges.
        const int ready = ::poll(&wake, 1, c.capture().wait_ms(period_ms));
        if (ready < 0 && errno != EINTR)
            return nullptr;
        if (ready <= 0) {
            c.capture().tick();
            if (c.state() == State::Running) {
                c.watch_for_gpu_work(); // windowed recordings: a CUDA context yet? (idle_trace.hpp)
                c.flush_periodic();
            } else if (c.state() != State::Stopping)
                return nullptr; // stopped, disabled: nothing more to flush
            continue;
        }
        unsigned char sig = 0;
        if (::read(pipes.wake[0], &sig, 1) != 1 || sig == 0) // 0: Collector::wake_flusher(), not a signal
            continue;
        [[maybe_unused]] const ssize_t armed = ::write(pipes.watch[1], &sig, 1);
        c.stop(signal_reason(sig));
        die_of(sig);
        return nullptr;
    }
}

void* watchdog_main(void* arg)
{
    const LifecyclePipes& pipes = static_cast<Collector*>(arg)->lifecycle();
    unsigned char sig = 0;
    while (::read(pipes.watch[0], &sig, 1) != 1) {
        if (errno != EINTR)
            return nullptr;
    }
    ::poll(nullptr, 0, kFinishTimeoutMs);
    warn("finishing the trace took longer than 5 s (the file holds everything up to its last commit)");
    die_of(sig);
    return nullptr;
}

void on_terminating_signal(int sig)
{
    const int saved_errno = errno;
    int expected = 0;
    Collector* c = Collector::get();
    // The first signal starts finishing; a second one (the user insisting) kills at once.
    if (c && c->state() == State::Running && c->lifecycle().pending_signal.compare_exchange_strong(expected, sig)) {
        const unsigned char byte = static_cast<unsigned char>(sig);
        if (::write(c->lifecycle().wake[1], &byte, 1) == 1) {
            errno = saved_errno;
            return;
        }
    }
    die_of(sig);
    errno = saved_errno;
}

bool start_thread(void* (*main)(void*), Collector& c)
{
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_t thread;
    const bool ok = pthread_create(&thread, nullptr, main, &c) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (ok)
        pthread_detach(thread);
    return ok;
}

void hook_if_default(int sig)
{
    struct sigaction previous { };
    if (::sigaction(sig, nullptr, &previous) != 0 || previous.sa_handler != SIG_DFL || (previous.sa_flags & SA_SIGINFO))
        return; // the application handles it; its exit path reaches atexit
    struct sigaction ours { };
    ours.sa_handler = on_terminating_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    ::sigaction(sig, &ours, nullptr);
}

void at_exit()
{
    if (Collector* c = Collector::get())
        c->stop("exit");
}

void in_fork_child()
{
    if (Collector* c = Collector::get())
        c->abandon_after_fork();
}

} // namespace

void install_lifecycle_hooks(Collector& c)
{
    std::atexit(at_exit);
    pthread_atfork(nullptr, nullptr, in_fork_child);
    LifecyclePipes& p = c.lifecycle();
    const bool pipes = ::pipe2(p.wake, O_CLOEXEC) == 0 && ::pipe2(p.watch, O_CLOEXEC) == 0;
    if (pipes && start_thread(flusher_main, c) && start_thread(watchdog_main, c)) {
        hook_if_default(SIGTERM);
        hook_if_default(SIGINT);
    } else {
        warn("cannot start the collector's helper threads (records reach the file only at exit; a SIGTERM or "
             "SIGINT leaves the trace unfinished)");
    }
}

} // namespace fp8scope::collector
