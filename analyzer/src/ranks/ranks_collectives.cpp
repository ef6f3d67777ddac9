// Collectives classed by kernel name (docs/analysis.md "Across ranks", "Collectives"). NCCL names its device kernels
// after the collective: ncclDevKernel_<Coll>_<Op>_<type>_<algo>_<proto> (NCCL >= 2.19, src/device/generate.py) and
// ncclKernel_<Coll>_<algo>_<proto>_<Op>_<type> before; all-to-all and point-to-point run as grouped send/recv
// (ncclDevKernel_SendRecv). Outside NCCL (custom all-reduce, TransformerEngine's userbuffers) the name says what it
// can.
#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <algorithm>
#include <string>

namespace fp8scope::analyzer {

namespace {

bool has(std::string_view name, std::string_view part)
{
    return name.find(part) != std::string_view::npos;
}

// NCCL's kernel for collective `coll` (lower case), either naming scheme.
bool nccl_kernel_of(std::string_view name, std::string_view coll)
{
    for (const std::string_view prefix : { "nccldevkernel_", "ncclkernel_" }) {
        const size_t at = name.find(prefix);
        if (at == std::string_view::npos)
            continue;
        const std::string_view rest = name.substr(at + prefix.size());
        // The collective is the whole first field: "reduce" must not match "reducescatter".
        if (rest.starts_with(coll) && (rest.size() == coll.size() || rest[coll.size()] == '_'))
            return true;
    }
    return false;
}

// Ordered: "reducescatter" and "allreduce" contain "reduce", so the specific names come first.
const CollectiveRule kRules[] = {
    { CollectiveKind::ReduceScatter, "contains `reducescatter` or `reduce_scatter`",
        [](std::string_view n) { return has(n, "reducescatter") || has(n, "reduce_scatter"); } },
    { CollectiveKind::AllReduce, "contains `allreduce`, `all_reduce` or `cross_device_reduce`",
        [](std::string_view n) {
            return has(n, "allreduce") || has(n, "all_reduce") || has(n, "cross_device_reduce");
        } },
    { CollectiveKind::AllGather, "contains `allgather` or `all_gather`",
        [](std::string_view n) { return has(n, "allgather") || has(n, "all_gather"); } },
    { CollectiveKind::AllToAll, "contains `alltoall` or `all_to_all`",
        [](std::string_view n) { return has(n, "alltoall") || has(n, "all_to_all"); } },
    { CollectiveKind::SendRecv, "contains `sendrecv`, or is NCCL's `Send` or `Recv` kernel",
        [](std::string_view n) {
            return has(n, "sendrecv") || nccl_kernel_of(n, "send") || nccl_kernel_of(n, "recv");
        } },
    { CollectiveKind::Broadcast, "contains `broadcast`", [](std::string_view n) { return has(n, "broadcast"); } },
    { CollectiveKind::Reduce, "is NCCL's `Reduce` kernel (`ncclDevKernel_Reduce_*`, `ncclKernel_Reduce_*`)",
        [](std::string_view n) { return nccl_kernel_of(n, "reduce"); } },
};

} // namespace

std::string_view collective_kind_id(CollectiveKind kind)
{
    switch (kind) {
    case CollectiveKind::AllReduce:
        return "all_reduce";
    case CollectiveKind::AllGather:
        return "all_gather";
    case CollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case CollectiveKind::Broadcast:
        return "broadcast";
    case CollectiveKind::Reduce:
        return "reduce";
    case CollectiveKind::AllToAll:
        return "all_to_all";
    case CollectiveKind::SendRecv:
        return "send_recv";
    case CollectiveKind::HostStaged:
        return "host_staged";
    case CollectiveKind::Other:
        break;
    }
    return "other";
}

std::span<const CollectiveRule> collective_rules()
{
    return kRules;
}

CollectiveKind classify_collective(std::string_view kernel_name)
{
    std::string lower(kernel_name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
        [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
    for (const CollectiveRule& rule : kRules)
        if (rule.matches(lower))
            return rule.kind;
    return CollectiveKind::Other;
}

} // namespace fp8scope::analyzer
