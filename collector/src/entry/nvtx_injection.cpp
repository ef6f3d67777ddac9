// The NVTX range wrappers (calls/nvtx_paths.hpp): installed into NVTX's core function table on top of CUPTI's
// implementation, they keep the calling thread's range path, count the step ranges (capture/steps.hpp) and let the
// capture windows switch on them before the range reaches CUPTI, then forward to CUPTI (NvtxForwarding). They reach
// the collector through its one pointer: NVTX's table holds plain functions.
#include "entry/entry.hpp"

#include "calls/nvtx_paths.hpp"
#include "capture/steps.hpp"
#include "session/collector.hpp"

// Types only: the collector implements no NVTX call itself.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cwchar>

namespace fp8scope::collector {
namespace {

// The wrappers' answer when they do not forward: the range's 0-based level (push) or the level left (pop).
int depth_answer(int offset)
{
    return nvtx_path_depth() + offset;
}

void push_text(Collector* c, std::string_view name)
{
    if (c && is_step_range_name(name))
        c->capture().on_nvtx_step(c->steps().count_nvtx_range());
    nvtx_path_push(name);
}

// Forwards to CUPTI's function `next` unless forwarding is off (CUPTI detached between capture windows).
template <typename Fn, typename Arg> int forward(Collector* c, std::atomic<Fn> NvtxForwarding::*next, Arg arg)
{
    if (!c)
        return 0;
    NvtxForwarding& f = c->nvtx();
    const Fn to = (f.*next).load(std::memory_order_relaxed);
    if (!f.on.load(std::memory_order_relaxed))
        return depth_answer(-1);
    return to ? to(arg) : 0;
}

int wrapped_push_a(const char* message)
{
    Collector* c = Collector::get();
    push_text(c, message ? std::string_view(message) : std::string_view());
    return forward(c, &NvtxForwarding::push_a, message);
}

int wrapped_push_w(const wchar_t* message)
{
    // Wide names are rare; keep their ASCII characters.
    char narrow[128] = {};
    size_t n = 0;
    for (const wchar_t* w = message; w && *w && n + 1 < sizeof narrow; ++w)
        narrow[n++] = *w < 128 ? static_cast<char>(*w) : '?';
    Collector* c = Collector::get();
    push_text(c, std::string_view(narrow, n));
    return forward(c, &NvtxForwarding::push_w, message);
}

int wrapped_push_ex(const nvtxEventAttributes_t* attributes)
{
    std::string_view name = "?"; // registered strings are not resolved
    if (attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
        name = attributes->message.ascii;
    Collector* c = Collector::get();
    push_text(c, name);
    return forward(c, &NvtxForwarding::push_ex, static_cast<const void*>(attributes));
}

int wrapped_pop()
{
    nvtx_path_pop();
    Collector* c = Collector::get();
    if (!c)
        return 0;
    NvtxForwarding& f = c->nvtx();
    const NvtxForwarding::Pop next = f.pop.load(std::memory_order_relaxed);
    if (!f.on.load(std::memory_order_relaxed))
        return depth_answer(0);
    return next ? next() : 0;
}

// Whether table[id] can be wrapped: the slot exists and holds nothing, our wrapper, or the same function
// another module held (CUPTI's implementation serves every NVTX module).
template <typename Fn, typename Wrapper>
bool can_wrap(NvtxFunctionTable table, unsigned size, unsigned id, const std::atomic<Fn>& next, Wrapper wrapper)
{
    if (id >= size || !table[id])
        return false;
    const auto current = reinterpret_cast<Fn>(*table[id]);
    const Fn known = next.load();
    return current == reinterpret_cast<Fn>(wrapper) || !current || !known || known == current;
}

template <typename Fn, typename Wrapper>
void wrap(NvtxFunctionTable table, unsigned id, std::atomic<Fn>& next, Wrapper wrapper)
{
    const auto current = reinterpret_cast<Fn>(*table[id]);
    if (current == reinterpret_cast<Fn>(wrapper))
        return;
    if (current)
        next.store(current);
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(wrapper);
}

} // namespace

bool wrap_nvtx_ranges(Collector& collector, void* get_export_table)
{
    using GetExportTable = const void* (*)(uint32_t);
    const auto get = reinterpret_cast<GetExportTable>(get_export_table);
    if (!get)
        return false;
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) || !callbacks->GetModuleFunctionTable)
        return false;
    NvtxFunctionTable table = nullptr;
    unsigned size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
        return false;
    NvtxForwarding& f = collector.nvtx();
    // All four or none, so that pushes and pops stay balanced.
    if (!can_wrap(table, size, NVTX_CBID_CORE_RangePushA, f.push_a, &wrapped_push_a)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePushW, f.push_w, &wrapped_push_w)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePushEx, f.push_ex, &wrapped_push_ex)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePop, f.pop, &wrapped_pop))
        return false;
    wrap(table, NVTX_CBID_CORE_RangePushA, f.push_a, &wrapped_push_a);
    wrap(table, NVTX_CBID_CORE_RangePushW, f.push_w, &wrapped_push_w);
    wrap(table, NVTX_CBID_CORE_RangePushEx, f.push_ex, &wrapped_push_ex);
    wrap(table, NVTX_CBID_CORE_RangePop, f.pop, &wrapped_pop);
    return true;
}

} // namespace fp8scope::collector
