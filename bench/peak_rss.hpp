// Peak resident memory of the running process, for the benchmarks' figures (header-only: each benchmark is one file).
#pragma once

#include <fstream>
#include <string>

namespace fp8scope::bench {

// VmHWM from /proc/self/status, in GB (0 when it cannot be read).
inline double peak_rss_gb()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("VmHWM:"))
            return std::stod(line.substr(6)) / (1024.0 * 1024.0);
    return 0;
}

} // namespace fp8scope::bench
