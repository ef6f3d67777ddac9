#include "calls/api_calls.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <mutex>

namespace fp8scope::collector {
namespace {

struct Frame {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    uint64_t start_ns;
    bool recording; // a window was open at the entry
};

// Runtime calls nest driver calls (cudaLaunchKernel into cuLaunchKernel) a level or two deep.
constexpr size_t kMaxDepth = 16;

struct CallStack {
    uint64_t generation = 0;
    size_t depth = 0;
    std::array<Frame, kMaxDepth> frames {};
};

// One thread's records; the registry keeps it after the thread ends, until it is flushed empty.
struct ThreadBatch {
    std::mutex mutex; // uncontended but for a flush from another thread
    ApiCallBatch calls;
    uint32_t tid = 0;
};

// Never freed: CUPTI may call back while the process's static objects are being destroyed.
struct Registry {
    std::mutex sink_mutex;
    std::shared_ptr<ApiCallSink> sink;
    std::mutex mutex;
    std::vector<std::shared_ptr<ThreadBatch>> batches;
};
Registry& registry()
{
    static Registry* r = new Registry;
    return *r;
}

thread_local CallStack t_stack;
thread_local std::shared_ptr<ThreadBatch> t_batch;
thread_local int t_own_work = 0;

std::shared_ptr<ApiCallSink> sink()
{
    Registry& r = registry();
    std::lock_guard lock(r.sink_mutex);
    return r.sink;
}

int64_t hand_over(ApiCallBatch&& calls)
{
    if (calls.empty())
        return 0;
    const auto to = sink();
    const auto count = static_cast<int64_t>(calls.size());
    return to && (*to)(std::move(calls)) ? 0 : count;
}

ThreadBatch& thread_batch()
{
    if (!t_batch) {
        t_batch = std::make_shared<ThreadBatch>();
        t_batch->tid = static_cast<uint32_t>(syscall(SYS_gettid));
        t_batch->calls.reserve(kApiCallBatch);
        Registry& r = registry();
        std::lock_guard lock(r.mutex);
        r.batches.push_back(t_batch);
    }
    return *t_batch;
}

} // namespace

void set_api_call_sink(ApiCallSink sink)
{
    Registry& r = registry();
    std::lock_guard lock(r.sink_mutex);
    r.sink = std::make_shared<ApiCallSink>(std::move(sink));
}

void api_call_enter(
    CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t now_ns, uint64_t generation, bool recording)
{
    CallStack& stack = t_stack;
    if (stack.generation != generation) {
        stack.generation = generation;
        stack.depth = 0;
    }
    if (stack.depth < kMaxDepth)
        stack.frames[stack.depth] = { domain, cbid, now_ns, recording };
    ++stack.depth; // deeper than kMaxDepth: counted, so that the exits pair up again
}

void api_call_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data, uint64_t now_ns,
    uint64_t generation, bool keep, uint32_t pid)
{
    CallStack& stack = t_stack;
    if (stack.generation != generation || stack.depth == 0)
        return; // the entry was not seen
    // The innermost open call of the same id: frames above it are calls whose exit never came.
    size_t at = std::min(stack.depth, kMaxDepth);
    while (at > 0 && (stack.frames[at - 1].domain != domain || stack.frames[at - 1].cbid != cbid))
        --at;
    if (stack.depth > kMaxDepth) {
        --stack.depth; // too deep to have been kept
        return;
    }
    if (at == 0)
        return; // its entry was not seen: leave the stack as it is
    const uint64_t start_ns = stack.frames[at - 1].start_ns;
    keep = keep || stack.frames[at - 1].recording;
    stack.depth = at - 1;
    // A driver call made by a traced runtime call (cudaLaunchKernel's cuLaunchKernel) shares its correlation id, and
    // CUPTI's activity records leave it out: so do we.
    bool inside_runtime = false;
    for (size_t i = 0; i + 1 < at; ++i)
        inside_runtime = inside_runtime || stack.frames[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (!keep || (domain == CUPTI_CB_DOMAIN_DRIVER_API && inside_runtime))
        return;
    ApiCall call;
    CUpti_ActivityAPI& r = call.record;
    r.kind = domain == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    r.cbid = cbid;
    r.start = start_ns;
    r.end = now_ns;
    r.processId = pid;
    r.correlationId = data.correlationId;
    if (data.functionReturnValue) // cudaError_t and CUresult are both enums of int size
        r.returnValue = *static_cast<const uint32_t*>(data.functionReturnValue);
    call.own_work = t_own_work > 0;
    ThreadBatch& batch = thread_batch();
    r.threadId = batch.tid;
    ApiCallBatch full;
    {
        std::lock_guard lock(batch.mutex);
        batch.calls.push_back(call);
        if (batch.calls.size() >= kApiCallBatch) {
            full.swap(batch.calls);
            batch.calls.reserve(kApiCallBatch);
        }
    }
    hand_over(std::move(full));
}

int64_t flush_api_calls()
{
    std::vector<std::shared_ptr<ThreadBatch>> batches;
    {
        Registry& r = registry();
        std::lock_guard lock(r.mutex);
        batches = r.batches;
        // Held only by the registry and this copy: its thread has ended, and this is its last flush.
        std::erase_if(r.batches, [](const std::shared_ptr<ThreadBatch>& b) { return b.use_count() == 2; });
    }
    int64_t refused = 0;
    for (const auto& batch : batches) {
        ApiCallBatch calls;
        {
            std::lock_guard lock(batch->mutex);
            calls.swap(batch->calls);
        }
        refused += hand_over(std::move(calls));
    }
    return refused;
}

void enter_own_work()
{
    ++t_own_work;
}

void leave_own_work()
{
    --t_own_work;
}

} // namespace fp8scope::collector
