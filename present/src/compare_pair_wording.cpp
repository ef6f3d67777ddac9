// What compare says about the pair before any figure (compare_wording.hpp pair_lines(); docs/analysis.md "Compare",
// "What the pair is"): the analyzer's PairIdentity in words.
#include "fp8scope/present/compare_wording.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"

#include <fmt/format.h>

namespace fp8scope::present {

using namespace analyzer;

namespace {

std::string precision_of(const RunIdentity& side)
{
    return side.fp8 ? "runs FP8 (FP8 GEMM kernels in its analysed steps)"
                    : "runs no FP8 GEMM (BF16 or another 16- or 32-bit precision)";
}

std::string arguments_text(const std::vector<std::string>& arguments, Escape escape)
{
    std::string out;
    for (const std::string& argument : arguments) {
        if (!out.empty())
            out += ' ';
        out += argument;
    }
    // fmt, not "'" + string: g++ 12 warns (-Wrestrict, a false positive) on that in Release (issue 45 item 7).
    return fmt::format("'{}'", escape(shortened(out, 160)));
}

} // namespace

std::vector<PairLine> pair_lines(const PairIdentity& p, Escape escape)
{
    std::vector<PairLine> out;
    if (p.swapped)
        out.push_back({ "Order",
            "the FP8 run was given as the reference: it is compared as the run, against the other "
            "as its reference, so that FP8's price is the FP8 run's (swap the arguments to "
            "silence this)" });
    const auto unknown = [](const std::string& text) { return text.empty() ? std::string("unknown") : text; };
    if (p.different_gpus)
        out.push_back({ "GPU",
            fmt::format("the run on {}, the reference on {}: different GPUs, so only the "
                        "performance is compared, and it is the GPUs' difference as much as FP8's",
                escape(p.run.gpu), escape(p.ref.gpu)) });
    else if (p.run.gpu == p.ref.gpu)
        out.push_back({ "GPU", fmt::format("{} in both", escape(unknown(p.run.gpu))) });
    else
        out.push_back({ "GPU",
            fmt::format(
                "the run on {}, the reference on {}", escape(unknown(p.run.gpu)), escape(unknown(p.ref.gpu))) });
    std::string job;
    if (p.run.program.empty() || p.ref.program.empty())
        job = fmt::format("the run ran '{}', the reference '{}': a trace without its command line cannot be told "
                          "apart by it",
            escape(unknown(p.run.program)), escape(unknown(p.ref.program)));
    else if (p.run.program != p.ref.program)
        job = fmt::format("the run ran '{}', the reference '{}': different jobs, so only the performance is compared",
            escape(p.run.program), escape(p.ref.program));
    else if (p.different_jobs) {
        job = fmt::format(
            "'{}' in both, with other arguments beyond precision switches and run names", escape(p.run.program));
        if (!p.run_only_arguments.empty())
            job += fmt::format("; only the run has {}", arguments_text(p.run_only_arguments, escape));
        if (!p.ref_only_arguments.empty())
            job += fmt::format("; only the reference has {}", arguments_text(p.ref_only_arguments, escape));
        job += ": different jobs, so only the performance is compared";
    } else
        job = fmt::format(
            "'{}' in both, the same arguments beyond precision switches and run names", escape(p.run.program));
    out.push_back({ "Job", job });
    std::string model = p.sites_in_common
        ? fmt::format("{} in common (the run has {} with samples, the reference {})",
            count_of(*p.sites_in_common, "tensor site", "tensor sites"), p.run.sites, p.ref.sites)
        : fmt::format("tensor sites not matched (statistics: the run {}, the reference {})",
            p.run.sites > 0 ? "has them" : "none", p.ref.sites > 0 ? "has them" : "none");
    model += fmt::format("; {} in common ({} only in the run, {} only in the reference)",
        count_of(p.kernel_names_in_common, "kernel name", "kernel names"), p.run_only_kernel_names,
        p.ref_only_kernel_names);
    out.push_back({ "Model", model });
    out.push_back(
        { "Precision", fmt::format("the run {}; the reference {}", precision_of(p.run), precision_of(p.ref)) });
    return out;
}

std::string price_not_split_sentence(const PairIdentity& p, Escape escape)
{
    if (p.performance_only.empty())
        return {};
    return fmt::format(
        "FP8's price is not split out: {}; the step change is theirs as much as FP8's", escape(p.performance_only));
}

} // namespace fp8scope::present
