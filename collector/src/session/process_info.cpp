#include "session/process_info.hpp"

#include "session/warn.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

namespace fp8scope::collector {
namespace {

std::atomic<pid_t> g_process_id { 0 }; // 0: not read yet

void refresh_process_id()
{
    g_process_id.store(::getpid(), std::memory_order_relaxed);
}

} // namespace

pid_t process_id()
{
    pid_t pid = g_process_id.load(std::memory_order_relaxed);
    if (pid != 0)
        return pid;
    // The fork handler is registered (once) before the pid is first kept, so no fork leaves a child with its
    // parent's pid.
    static const bool registered = ::pthread_atfork(nullptr, nullptr, refresh_process_id) == 0;
    pid = ::getpid();
    if (registered)
        g_process_id.store(pid, std::memory_order_relaxed);
    return pid; // without the handler every call asks the kernel
}

bool env_flag(const char* name, bool fallback)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return fallback;
    return value[0] == '1' || value[0] == 'y' || value[0] == 'Y' || value[0] == 't' || value[0] == 'T';
}

std::string env_text(const char* name, const char* fallback)
{
    const char* value = std::getenv(name);
    return value && *value ? value : fallback;
}

size_t env_size(const char* name, size_t fallback, size_t lo, size_t hi)
{
    const char* value = std::getenv(name);
    if (!value || !*value)
        return fallback;
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (end == value || *end != '\0' || parsed < lo || parsed > hi) {
        warn(std::string("ignoring ") + name + "=" + value + " (expected " + std::to_string(lo) + ".."
            + std::to_string(hi) + ")");
        return fallback;
    }
    return static_cast<size_t>(parsed);
}

std::string host_name()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    return name;
}

std::string command_line()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!raw.empty() && raw.back() == '\0')
        raw.pop_back();
    for (char& c : raw)
        if (c == '\0')
            c = ' ';
    return raw;
}

// Both calls only return a constant, so they are safe inside cuInit. The runtime loads the driver with RTLD_LOCAL, so
// RTLD_DEFAULT would not find it.
int loaded_library_version(const char* library, const char* function)
{
    struct Search {
        const char* library;
        std::string path;
    } search { library, {} };
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (info->dlpi_name && std::strstr(info->dlpi_name, s->library)) {
                s->path = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &search);
    if (search.path.empty())
        return 0;
    void* handle = dlopen(search.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        return 0;
    int version = 0;
    using VersionFn = int (*)(int*);
    auto fn = reinterpret_cast<VersionFn>(dlsym(handle, function));
    if (!fn || fn(&version) != 0)
        version = 0;
    dlclose(handle);
    return version;
}

int64_t realtime_ns()
{
    timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace fp8scope::collector
