#include "lifecycle.hpp"

#include "session.hpp"
#include "warn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fp8scope::collector {
namespace {

    // A signal handler may not touch SQLite or CUPTI (spec: "no SQLite calls in signal handlers"). It wakes this
    // helper thread through a pipe, which finishes the trace, and waits for it on a second pipe with a timeout: if
    // the signal interrupted a thread inside CUPTI or the driver, the flush could wait on that thread forever.
    int g_wake[2] = { -1, -1 };
    int g_done[2] = { -1, -1 };
    constexpr int kFinishTimeoutMs = 5000;
    struct sigaction g_previous_term { };
    struct sigaction g_previous_int { };

    const char* signal_reason(int sig)
    {
        return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal";
    }

    void* finisher_main(void*)
    {
        unsigned char sig = 0;
        for (;;) {
            const ssize_t got = ::read(g_wake[0], &sig, 1);
            if (got == 1)
                break;
            if (got < 0 && errno == EINTR)
                continue;
            return nullptr;
        }
        stop_session(signal_reason(sig));
        const unsigned char done = 1;
        [[maybe_unused]] const ssize_t written = ::write(g_done[1], &done, 1);
        return nullptr;
    }

    void on_terminating_signal(int sig)
    {
        const int saved_errno = errno;
        if (session_state() == State::Running) {
            const unsigned char byte = static_cast<unsigned char>(sig);
            if (::write(g_wake[1], &byte, 1) == 1) {
                pollfd done { g_done[0], POLLIN, 0 };
                while (::poll(&done, 1, kFinishTimeoutMs) < 0 && errno == EINTR) { }
            }
        }
        // Then die of the signal, exactly as without fp8scope: restore the default action and re-raise. The
        // signal is blocked while its handler runs, so it is delivered when the handler returns.
        struct sigaction dfl { };
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(sig, &dfl, nullptr);
        ::raise(sig);
        errno = saved_errno;
    }

    bool start_finisher()
    {
        if (::pipe2(g_wake, O_CLOEXEC) != 0 || ::pipe2(g_done, O_CLOEXEC) != 0)
            return false;
        // Created with every signal blocked, so that the host's signals never run on it.
        sigset_t all;
        sigset_t previous;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &previous);
        pthread_t thread;
        const bool ok = pthread_create(&thread, nullptr, finisher_main, nullptr) == 0;
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        if (ok)
            pthread_detach(thread);
        return ok;
    }

    void hook_if_default(int sig, struct sigaction& previous)
    {
        if (::sigaction(sig, nullptr, &previous) != 0 || previous.sa_handler != SIG_DFL
            || (previous.sa_flags & SA_SIGINFO))
            return; // the application handles it; its exit path reaches atexit
        struct sigaction ours { };
        ours.sa_handler = on_terminating_signal;
        sigemptyset(&ours.sa_mask);
        ours.sa_flags = SA_RESTART;
        ::sigaction(sig, &ours, nullptr);
    }

    void at_exit()
    {
        stop_session("exit");
    }

    void in_fork_child()
    {
        abandon_session_after_fork();
    }

} // namespace

void install_lifecycle_hooks()
{
    std::atexit(at_exit);
    pthread_atfork(nullptr, nullptr, in_fork_child);
    if (start_finisher()) {
        hook_if_default(SIGTERM, g_previous_term);
        hook_if_default(SIGINT, g_previous_int);
    } else {
        warn("cannot start the signal helper thread (a SIGTERM or SIGINT leaves the trace unfinished)");
    }
}

} // namespace fp8scope::collector
