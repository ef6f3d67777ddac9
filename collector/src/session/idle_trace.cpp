#include "session/idle_trace.hpp"

#include <cerrno>
#include <unistd.h>

namespace fp8scope::collector {

int64_t activity_rows(const DecoderCounters& decoded)
{
    return decoded.kernels + decoded.api_calls + decoded.syncs + decoded.memcpys + decoded.memsets + decoded.nvtx
        + decoded.collector_calls;
}

bool did_no_gpu_work(const WorkEvidence& evidence)
{
    if (evidence.activity_rows > 0 || evidence.job_wrote_rows || evidence.records_lost > 0)
        return false;
    // Between capture windows nothing is recorded: only the absence of any CUDA context tells that the process did
    // nothing there either (every launch, copy or allocation needs one).
    return evidence.whole_process_recorded || evidence.context_seen == false;
}

bool remove_trace_files(const std::string& path)
{
    for (const char* suffix : { "-wal", "-shm", "-journal" })
        ::unlink((path + suffix).c_str()); // finish() leaves none of them; a failed one may have
    return ::unlink(path.c_str()) == 0 || errno == ENOENT;
}

std::string removed_trace_manifest_line(std::string_view absolute_path)
{
    std::string line(1, '-'); // built by appending: GCC 12 warns falsely (-Wrestrict) on "-" + string
    line += absolute_path;
    line += '\n';
    return line;
}

} // namespace fp8scope::collector
