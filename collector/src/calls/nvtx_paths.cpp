#include "calls/nvtx_paths.hpp"

// Types only: the collector implements no NVTX call itself.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <cwchar>

namespace fp8scope::collector {
namespace {

constexpr size_t kPathBytes = 1024;
constexpr size_t kMaxDepth = 64;

// Per thread: the path text and where each level starts. Levels deeper than kMaxDepth are counted but not
// stored, so pops stay balanced.
struct ThreadPath {
    char text[kPathBytes] = {};
    uint32_t length = 0;
    uint32_t level_start[kMaxDepth] = {};
    uint32_t depth = 0;
};
thread_local ThreadPath t_path;
std::atomic<int64_t> g_step_ranges { 0 };
std::atomic<StepRangeListener> g_step_listener { nullptr };

using PushA = int (*)(const char*);
using PushW = int (*)(const wchar_t*);
using PushEx = int (*)(const nvtxEventAttributes_t*);
using Pop = int (*)();
// CUPTI's implementations, which the wrappers forward to. The same functions serve every NVTX module.
std::atomic<PushA> g_push_a { nullptr };
std::atomic<PushW> g_push_w { nullptr };
std::atomic<PushEx> g_push_ex { nullptr };
std::atomic<Pop> g_pop { nullptr };
std::atomic<bool> g_forwarding { true };

// The wrappers' answer when they do not forward: the range's 0-based level (push) or the level left (pop).
int depth_answer(int offset)
{
    return static_cast<int>(t_path.depth) + offset;
}

void push_text(std::string_view name)
{
    if (is_step_range_name(name)) {
        const int64_t step = g_step_ranges.fetch_add(1, std::memory_order_relaxed);
        if (const StepRangeListener listener = g_step_listener.load(std::memory_order_relaxed))
            listener(step);
    }
    nvtx_path_push(name);
}

int wrapped_push_a(const char* message)
{
    push_text(message ? std::string_view(message) : std::string_view());
    const PushA next = g_push_a.load(std::memory_order_relaxed);
    if (!g_forwarding.load(std::memory_order_relaxed))
        return depth_answer(-1);
    return next ? next(message) : 0;
}

int wrapped_push_w(const wchar_t* message)
{
    // Wide names are rare; keep their ASCII characters.
    char narrow[128] = {};
    size_t n = 0;
    for (const wchar_t* c = message; c && *c && n + 1 < sizeof narrow; ++c)
        narrow[n++] = *c < 128 ? static_cast<char>(*c) : '?';
    push_text(std::string_view(narrow, n));
    const PushW next = g_push_w.load(std::memory_order_relaxed);
    if (!g_forwarding.load(std::memory_order_relaxed))
        return depth_answer(-1);
    return next ? next(message) : 0;
}

int wrapped_push_ex(const nvtxEventAttributes_t* attributes)
{
    std::string_view name = "?"; // registered strings are not resolved
    if (attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii)
        name = attributes->message.ascii;
    push_text(name);
    const PushEx next = g_push_ex.load(std::memory_order_relaxed);
    if (!g_forwarding.load(std::memory_order_relaxed))
        return depth_answer(-1);
    return next ? next(attributes) : 0;
}

int wrapped_pop()
{
    nvtx_path_pop();
    const Pop next = g_pop.load(std::memory_order_relaxed);
    if (!g_forwarding.load(std::memory_order_relaxed))
        return depth_answer(0);
    return next ? next() : 0;
}

// Whether table[id] can be wrapped: the slot exists and holds nothing, our wrapper, or the same function
// another module held (CUPTI's implementation serves every NVTX module).
template <typename Fn>
bool can_wrap(NvtxFunctionTable table, unsigned size, unsigned id, const std::atomic<Fn>& next, Fn wrapper)
{
    if (id >= size || !table[id])
        return false;
    const auto current = reinterpret_cast<Fn>(*table[id]);
    const Fn known = next.load();
    return current == wrapper || !current || !known || known == current;
}

template <typename Fn> void wrap(NvtxFunctionTable table, unsigned id, std::atomic<Fn>& next, Fn wrapper)
{
    const auto current = reinterpret_cast<Fn>(*table[id]);
    if (current == wrapper)
        return;
    if (current)
        next.store(current);
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(wrapper);
}

} // namespace

void set_nvtx_forwarding(bool on)
{
    g_forwarding.store(on, std::memory_order_relaxed);
}

bool is_step_range_name(std::string_view name)
{
    return name == "step" || name == "train_step" || name == "iteration" || name.starts_with("ProfilerStep#");
}

void nvtx_path_push(std::string_view name)
{
    ThreadPath& p = t_path;
    if (p.depth < kMaxDepth) {
        p.level_start[p.depth] = p.length;
        size_t at = p.length;
        if (at > 0 && at + 1 < kPathBytes)
            p.text[at++] = '/';
        const size_t room = at < kPathBytes ? kPathBytes - 1 - at : 0;
        const size_t n = name.size() < room ? name.size() : room;
        std::memcpy(p.text + at, name.data(), n);
        p.length = static_cast<uint32_t>(at + n);
        p.text[p.length] = '\0';
    }
    ++p.depth;
}

void nvtx_path_pop()
{
    ThreadPath& p = t_path;
    if (p.depth == 0)
        return; // an unbalanced pop: NVTX itself ignores it
    --p.depth;
    if (p.depth < kMaxDepth) {
        p.length = p.level_start[p.depth];
        p.text[p.length] = '\0';
    }
}

std::string_view current_nvtx_path()
{
    return std::string_view(t_path.text, t_path.length);
}

void set_step_range_listener(StepRangeListener listener)
{
    g_step_listener.store(listener, std::memory_order_relaxed);
}

int64_t nvtx_steps_seen()
{
    return g_step_ranges.load(std::memory_order_relaxed);
}

bool wrap_nvtx_ranges(void* get_export_table)
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
    // All four or none, so that pushes and pops stay balanced.
    if (!can_wrap(table, size, NVTX_CBID_CORE_RangePushA, g_push_a, &wrapped_push_a)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePushW, g_push_w, &wrapped_push_w)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePushEx, g_push_ex, &wrapped_push_ex)
        || !can_wrap(table, size, NVTX_CBID_CORE_RangePop, g_pop, &wrapped_pop))
        return false;
    wrap(table, NVTX_CBID_CORE_RangePushA, g_push_a, &wrapped_push_a);
    wrap(table, NVTX_CBID_CORE_RangePushW, g_push_w, &wrapped_push_w);
    wrap(table, NVTX_CBID_CORE_RangePushEx, g_push_ex, &wrapped_push_ex);
    wrap(table, NVTX_CBID_CORE_RangePop, g_pop, &wrapped_pop);
    return true;
}

} // namespace fp8scope::collector
