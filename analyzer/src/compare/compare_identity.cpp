// What differs between a compared pair, before any figure (compare.hpp PairIdentity; docs/analysis.md "Compare",
// "What the pair is"): each trace's GPU, program and precision, the sites and kernel names they share, the command
// lines' arguments beyond precision switches and run names, and whether the pair is of one job on one GPU.
#include "compare/compare_detail.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

namespace {

// Words that a precision switch carries, in a flag, its value or a positional argument ("--precision fp8",
// "--fp8-format hybrid", "configs/llama_bf16.yaml").
constexpr std::array<std::string_view, 23> kPrecisionWords = { "fp8", "fp16", "bf16", "fp32", "tf32", "float8",
    "float16", "bfloat16", "float32", "half", "e4m3", "e5m2", "precision", "dtype", "amp", "recipe", "scaling", "amax",
    "quant", "quantize", "quantization", "mixed", "torchao" };
// Words of a flag that names, stores, lengthens, launches or executes a run differently without changing its model:
// where its output goes, its seed, how many steps, compiled or graphed, and the launcher's rank and rendezvous
// (`--local-rank 0`, `--master-port 29501`, `--rdzv-endpoint localhost:29400`).
constexpr std::array<std::string_view, 38> kRunWords = { "o", "out", "output", "name", "twin", "tag", "log", "logs",
    "logdir", "save", "dir", "seed", "steps", "step", "iters", "iterations", "epochs", "compile", "compiled", "graph",
    "graphs", "profile", "trace", "wandb", "resume", "checkpoint", "ckpt", "run", "warmup", "verbose", "rank", "local",
    "port", "addr", "master", "rdzv", "endpoint", "id" };

std::vector<std::string_view> tokens_of(std::string_view line)
{
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < line.size()) {
        const size_t space = line.find(' ', pos);
        const size_t end = space == std::string_view::npos ? line.size() : space;
        if (end > pos)
            out.push_back(line.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

template <size_t N> bool has_word(std::string_view text, const std::array<std::string_view, N>& words)
{
    std::string word;
    const auto found = [&] { return !word.empty() && std::ranges::find(words, word) != words.end(); };
    for (const char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            continue;
        }
        if (found())
            return true;
        word.clear();
    }
    return found();
}

bool is_flag(std::string_view token)
{
    return token.size() > 1 && token.front() == '-' && std::isdigit(static_cast<unsigned char>(token[1])) == 0
        && token[1] != '.';
}

// The index of the program among the tokens: the script after an interpreter and its options, the module after
// -m, else the executable; tokens.size() when there is none.
size_t program_index(const std::vector<std::string_view>& tokens)
{
    bool module_next = false;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view token = tokens[i];
        const size_t slash = token.rfind('/');
        const std::string_view base = slash == std::string_view::npos ? token : token.substr(slash + 1);
        if (module_next)
            return i;
        if (base.starts_with("python"))
            continue;
        if (token.starts_with('-')) {
            module_next = token == "-m";
            continue;
        }
        return i;
    }
    return tokens.size();
}

std::string gpu_of(const TraceModel& model, const Report& report)
{
    std::vector<std::string> names;
    const auto add = [&](const GpuInfo& gpu) {
        if (!gpu.name.empty() && std::ranges::find(names, gpu.name) == names.end())
            names.push_back(gpu.name);
    };
    for (const uint32_t device : report.selection.devices)
        if (const auto gpu = std::ranges::find(model.gpus, static_cast<int32_t>(device), &GpuInfo::id);
            gpu != model.gpus.end())
            add(*gpu);
    if (names.empty())
        std::ranges::for_each(model.gpus, add);
    return fmt::format("{}", fmt::join(names, " + "));
}

// The items of `mine` that `theirs` lacks (as multisets), in their order.
std::vector<std::string> only_in(const std::vector<std::string>& mine, const std::vector<std::string>& theirs)
{
    std::map<std::string, int64_t> left;
    for (const std::string& item : theirs)
        ++left[item];
    std::vector<std::string> out;
    for (const std::string& item : mine)
        if (auto it = left.find(item); it != left.end() && it->second > 0)
            --it->second;
        else
            out.push_back(item);
    return out;
}

std::string joined(const std::vector<std::string>& items)
{
    return fmt::format("{}", fmt::join(items, " "));
}

} // namespace

namespace detail {

std::string program_of(std::string_view command_line)
{
    const std::vector<std::string_view> tokens = tokens_of(command_line);
    const size_t index = program_index(tokens);
    if (index == tokens.size())
        return {};
    const std::string_view token = tokens[index];
    const size_t slash = token.rfind('/');
    return std::string(slash == std::string_view::npos ? token : token.substr(slash + 1));
}

PairIdentity identify_pair(const CompareInput& in, const PerformanceComparison& performance,
    const SiteSamples& run_samples, const SiteSamples& ref_samples, bool swapped)
{
    PairIdentity p;
    p.swapped = swapped;
    for (auto [side, model, report, samples] : { std::tuple { &p.run, &in.run_model, &in.run_report, &run_samples },
             std::tuple { &p.ref, &in.ref_model, &in.ref_report, &ref_samples } }) {
        side->gpu = gpu_of(*model, *report);
        side->program = program_of(model->meta.command_line);
        side->fp8 = runs_fp8(*report);
        side->sites = static_cast<int64_t>(samples->size());
    }
    p.kernel_names_in_common = performance.kernels.common_names;
    p.run_only_kernel_names = performance.kernels.appeared_names;
    p.ref_only_kernel_names = performance.kernels.vanished_names;

    const std::vector<std::string> run_arguments = command_arguments_beyond_precision(in.run_model.meta.command_line);
    const std::vector<std::string> ref_arguments = command_arguments_beyond_precision(in.ref_model.meta.command_line);
    std::vector<std::string> reasons;
    if (!p.run.program.empty() && !p.ref.program.empty()) {
        p.run_only_arguments = only_in(run_arguments, ref_arguments);
        p.ref_only_arguments = only_in(ref_arguments, run_arguments);
        if (p.run.program != p.ref.program)
            reasons.push_back(fmt::format("the traces are of different jobs: the run ran '{}', the reference '{}'",
                p.run.program, p.ref.program));
        else if (!p.run_only_arguments.empty() || !p.ref_only_arguments.empty()) {
            std::vector<std::string> sides;
            if (!p.run_only_arguments.empty())
                sides.push_back(fmt::format("only the run has '{}'", joined(p.run_only_arguments)));
            if (!p.ref_only_arguments.empty())
                sides.push_back(fmt::format("only the reference has '{}'", joined(p.ref_only_arguments)));
            reasons.push_back(fmt::format("the traces are of different jobs: their command lines differ beyond "
                                          "precision switches and run names ({})",
                fmt::join(sides, "; ")));
        }
        p.different_jobs = !reasons.empty();
    }
    p.different_gpus = !p.run.gpu.empty() && !p.ref.gpu.empty() && p.run.gpu != p.ref.gpu;
    if (p.different_gpus)
        reasons.push_back(
            fmt::format("the runs ran on different GPUs (the run on {}, the reference on {})", p.run.gpu, p.ref.gpu));
    p.performance_only = fmt::format("{}", fmt::join(reasons, "; and "));
    return p;
}

} // namespace detail

std::vector<std::string> command_arguments_beyond_precision(std::string_view command_line)
{
    const std::vector<std::string_view> tokens = tokens_of(command_line);
    std::vector<std::string> out;
    for (size_t i = program_index(tokens) + 1; i < tokens.size(); ++i) {
        const std::string_view token = tokens[i];
        if (!is_flag(token)) {
            if (!has_word(token, kPrecisionWords))
                out.emplace_back(token);
            continue;
        }
        std::string_view flag = token, value;
        if (const size_t eq = token.find('='); eq != std::string_view::npos) {
            flag = token.substr(0, eq);
            value = token.substr(eq + 1);
        } else if (i + 1 < tokens.size() && !is_flag(tokens[i + 1])) {
            value = tokens[++i];
        }
        if (has_word(flag, kPrecisionWords) || has_word(value, kPrecisionWords) || has_word(flag, kRunWords))
            continue;
        out.push_back(value.empty() ? std::string(flag) : fmt::format("{} {}", flag, value));
    }
    return out;
}

bool runs_fp8(const Report& report)
{
    return report.kernel_classes.of(KernelClass::Fp8Gemm).count > 0;
}

bool fp8_given_as_reference(const CompareInput& input)
{
    return !runs_fp8(input.run_report) && runs_fp8(input.ref_report);
}

} // namespace fp8scope::analyzer
