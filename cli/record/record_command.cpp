#include "record/record_command.hpp"

#include "record/record_launch.hpp"
#include "trace_info/record_summary.hpp"

#include "fp8scope/common/capture_plan.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string_view>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

constexpr const char* kRecordExamples = R"(Examples:
  fp8scope record -- python train.py --precision fp8
  fp8scope record -o 'traces/run-%r-%p.sqlite' -- python train.py --precision fp8
  fp8scope record -o 'traces/rank%r.sqlite' -- torchrun --nproc-per-node 8 train.py
  fp8scope record -q --no-latency-timestamps -- ./my_cuda_app --size 4096
  fp8scope record --capture-steps 100:109 -- python train.py
  fp8scope record --capture-every 1000 --capture-length 10 -- python train.py --steps 10000
  fp8scope record --capture-range cudaProfilerApi -- python train.py
  fp8scope record --delay 60 --duration 10 -- ./my_cuda_app
  fp8scope record --monitor -o 'traces/run-%r.sqlite' -- python train.py --steps 1000000

Every process of the command that initializes CUDA writes its own trace (-o: %h host, %p pid, %r rank from
RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID, else LOCAL_RANK, else 'norank' (torchrun's launcher), %n counter,
%% percent sign; relative to the current directory). A process that did no GPU work (a torch.compile worker, a
launcher) removes its empty trace when it ends; FP8SCOPE_KEEP_EMPTY_TRACES=1 keeps it.
Without -o each process writes fp8scope-<host>-<pid>.sqlite in its own working directory. The command's stdout
is untouched; when it exits, a summary of the traces (kernels, syncs, memcpys, dropped records, size) goes to
stderr. Options of the command may follow it: everything from the first word that is not an option of record
(or after '--') is the command.

Python jobs get the fp8scope package on PYTHONPATH, and its sitecustomize first, which wraps PyTorch's
torch._scaled_mm in the dispatcher once the job imports torch, so that every scaled GEMM is seen with its recipe
whatever kernel runs it (docs/python.md, "Scaled GEMMs"), and hooks its optimizers and backward: each optimizer
step's end (or GradScaler's skip) is marked and the loss logged on the device, without a sync, in a job that does
neither itself (docs/python.md, "Steps and loss without code"). FP8SCOPE_TORCH_SCALED_MM=0 and
FP8SCOPE_TORCH_HOOKS=0 turn these off; FP8SCOPE_PYTHON names another copy of the package.

Capture windows record part of a job: steps A..B (--capture-steps), the steps whose number modulo N is below K
(--capture-every N --capture-length K: steps 0..K-1, N..N+K-1, ...), cudaProfilerStart..cudaProfilerStop
(--capture-range cudaProfilerApi), or a time range from the collector's start (--delay, --duration, in seconds).
Steps are those of fp8scope.step() / fp8scope_step(), else the optimizer step ends the Python hooks mark (unless
NVTX step ranges came first), else NVTX step ranges: a job with none opens no step window, and the summary says so. Outside a window CUPTI records nothing and tensor statistics are off
(--stats-outside-windows keeps them on). One kind of window per run.

--monitor is for runs left traced for days: periodic windows (by default 10 steps of every 1000; --capture-every
and --capture-length change them), tensor statistics in each window (FP8SCOPE_STATS_EVERY, every 10th step), and a
bounded trace (--max-size, 2048 MiB by default): once the trace's pages in use pass the bound, each new window
first deletes the oldest ones (meta capture_windows_dropped counts them). Between windows CUPTI is detached where
it can be (not once the job uses CUDA graphs). --max-size also works with --capture-every alone.

Exit codes: the command's exit code; 128+N when signal N ended it; 127 command not found; 126 command not
executable; 2 usage error; 69 collector library not found (set FP8SCOPE_LIBRARY); 70 internal error.
)";

// The collector's default (collector/src/session/output_path.hpp), for -o naming a directory.
constexpr const char* kDefaultFileName = "fp8scope-%h-%p.sqlite";

// The manifest is a fresh temporary file: each traced process appends the path of its trace to it.
struct Manifest {
    std::string path; // empty when it could not be created: the command still runs, without a summary
};

Manifest create_manifest()
{
    const char* tmpdir = std::getenv("TMPDIR");
    std::string directory = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    std::string name = directory + "/fp8scope-manifest-XXXXXX";
    int fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0 && directory != "/tmp") {
        directory = "/tmp"; // a stale TMPDIR should not cost the summary
        name = directory + "/fp8scope-manifest-XXXXXX";
        fd = mkostemp(name.data(), O_CLOEXEC);
    }
    if (fd < 0) {
        print_to_stderr(fmt::format("fp8scope: warning: cannot create a manifest file in {}: {} (no summary)\n",
            directory, std::strerror(errno)));
        return {};
    }
    close(fd);
    return { name };
}

std::string read_file(const std::string& path)
{
    std::string text;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return text;
    char buffer[4096];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0)
            text.append(buffer, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fd);
    return text;
}

// Under an outer `fp8scope record` (a script that records a step of itself), the outer run's summary should
// list these traces too, and count the processes that removed theirs for lack of GPU work.
void append_to_outer_manifest(
    const char* outer_path, const std::vector<std::string>& traces, const std::vector<std::string>& removed)
{
    const int fd = open(outer_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return;
    std::string lines;
    for (const auto& trace : traces)
        lines += trace + '\n';
    for (const auto& trace : removed)
        lines += '-' + trace + '\n';
    [[maybe_unused]] const ssize_t written = write(fd, lines.data(), lines.size());
    close(fd);
}

// With -o, the pattern is made absolute against record's working directory, so that processes that change
// directory write where the user asked. Its directory is created when its name holds no %-field (which only
// the collector can expand), so that `-o traces/run-%p.sqlite` works in a fresh checkout; a directory that
// cannot be made or written gives one warning now rather than a confusing silence later. A directory
// (`-o traces/`, or one that exists) gets the collector's default file name in it.
std::string prepare_output_pattern(const std::string& pattern)
{
    namespace fs = std::filesystem;
    std::error_code error;
    fs::path absolute = fs::absolute(pattern, error).lexically_normal();
    if (!absolute.has_filename() || fs::is_directory(absolute, error))
        absolute /= kDefaultFileName;
    const fs::path directory = absolute.parent_path();
    if (directory.string().find('%') != std::string::npos)
        return absolute.string();
    // Best effort and silent: a directory that cannot be made is reported once, by the first traced process
    // that fails to create its trace there (and a command that never initializes CUDA needs none).
    fs::create_directories(directory, error);
    return absolute.string();
}

void set_injection_variable(const char* name, const std::string& library)
{
    const char* previous = std::getenv(name);
    if (previous != nullptr && *previous != '\0' && library != previous) {
        // Another tool (nsys, a second profiler) had claimed the injection point; only one can hold it.
        print_to_stderr(fmt::format("fp8scope: warning: {} was '{}'; replaced by the collector (that library is "
                                    "not loaded)\n",
            name, previous));
    }
    set_environment(name, library);
}

// --monitor's defaults, each replaced by the option when it is given.
constexpr const char* kMonitorEvery = "1000";
constexpr const char* kMonitorLength = "10";
constexpr const char* kMonitorMaxSizeMib = "2048";

CaptureRequest capture_request(const RecordOptions& options)
{
    CaptureRequest request { options.capture_steps, options.capture_every, options.capture_length,
        options.capture_range, options.delay, options.duration, options.stats_outside_windows, options.max_size };
    if (options.monitor) {
        const auto fill = [](std::string& value, const char* fallback) {
            if (value.empty())
                value = fallback;
        };
        fill(request.every, kMonitorEvery);
        fill(request.length, kMonitorLength);
        fill(request.max_size, kMonitorMaxSizeMib);
    }
    return request;
}

void configure_environment(
    const RecordOptions& options, const std::string& library, const std::string& pattern, const Manifest& manifest)
{
    set_injection_variable("CUDA_INJECTION64_PATH", library);
    set_injection_variable("NVTX_INJECTION64_PATH", library);
    // The dynamic loader splits LD_PRELOAD at ':' and ' ', so a path holding one cannot be preloaded. The
    // injection variables above still reach every CUDA process; LD_PRELOAD only adds the lazy path.
    if (library.find_first_of(": ") == std::string::npos) {
        const char* preload = std::getenv("LD_PRELOAD");
        set_environment("LD_PRELOAD", prepend_preload(preload != nullptr ? preload : "", library));
    } else {
        print_to_stderr(fmt::format("fp8scope: warning: collector path '{}' holds ':' or a blank, which "
                                    "LD_PRELOAD cannot carry (only CUDA_INJECTION64_PATH is set)\n",
            library));
    }
    // Python jobs: the fp8scope package on the path, and its sitecustomize first, which wraps PyTorch's scaled
    // matmuls and hooks its optimizers and backward once the job imports torch (docs/python.md, "Scaled GEMMs" and
    // "Steps and loss without code"; FP8SCOPE_TORCH_SCALED_MM=0 and FP8SCOPE_TORCH_HOOKS=0 turn them off).
    if (const std::string python = locate_python_package(); !python.empty()) {
        const char* existing = std::getenv("PYTHONPATH");
        set_environment("PYTHONPATH",
            prepend_python_path(existing != nullptr ? existing : "", { python + "/fp8scope/_boot", python }));
    }
    if (!pattern.empty())
        set_environment("FP8SCOPE_OUTPUT", pattern);
    if (!manifest.path.empty())
        set_environment("FP8SCOPE_MANIFEST", manifest.path);
    if (options.latency_timestamps || options.no_latency_timestamps)
        set_environment("FP8SCOPE_LATENCY_TIMESTAMPS", options.latency_timestamps ? "1" : "0");
    if (options.no_nvtx)
        set_environment("FP8SCOPE_NVTX", "0");
    if (options.quiet)
        set_environment("FP8SCOPE_QUIET", "1");
    // The capture plan, parsed once (record_usage_error checked it): the collector reads it as it is, and before any
    // FP8SCOPE_CAPTURE_* variable the caller's environment may hold. A whole-run recording passes none.
    if (const CapturePlanResult capture = parse_capture_plan(capture_request(options));
        capture.plan && capture.plan->mode != CaptureMode::Full)
        set_environment(kCapturePlanVariable.data(), serialize_capture_plan(*capture.plan));
}

void print_summary(const std::vector<std::string>& traces, size_t removed)
{
    std::vector<TraceFileSummary> summaries;
    summaries.reserve(traces.size());
    for (const auto& path : traces)
        summaries.push_back(summarize_trace(path));
    print_to_stderr(render_record_summary(summaries, removed));
}

// Whether the argument at argv[at] (an option of record) takes the next argument as its value, as CLI11 will
// parse it: "-o FILE", "--output FILE", also after flags in a cluster ("-qo FILE"); not "-oFILE",
// "--output=FILE" or flags. An unknown option takes nothing; CLI11 then reports it.
bool takes_next_argument(const CLI::App& record, std::string_view arg)
{
    if (arg.starts_with("--")) {
        if (arg.find('=') != std::string_view::npos)
            return false;
        const CLI::Option* option = record.get_option_no_throw(std::string(arg));
        return option != nullptr && option->get_items_expected_max() > 0;
    }
    for (size_t i = 1; i < arg.size(); ++i) {
        const CLI::Option* option = record.get_option_no_throw(std::string { '-', arg[i] });
        if (option == nullptr)
            return false;
        if (option->get_items_expected_max() > 0)
            return i + 1 == arg.size(); // the rest of the cluster is its value
    }
    return false;
}

} // namespace

CLI::App* add_record_command(CLI::App& app, RecordOptions& options)
{
    CLI::App* record = app.add_subcommand("record", "Run a command with the collector and write one trace per process");
    record
        ->add_option("-o,--output", options.output_pattern,
            "Trace file pattern: %h host, %p pid, %r rank, %n counter, %% percent; a directory gets "
            "fp8scope-%h-%p.sqlite in it (default: that name in each process's working directory)")
        ->type_name("PATTERN")
        ->check(CLI::Validator(
            [](std::string& pattern) { return pattern.empty() ? std::string("the pattern is empty") : std::string(); },
            "", "non-empty"));
    auto* latency = record->add_flag("--latency-timestamps", options.latency_timestamps,
        "Record each kernel's queued and submitted times (default: the collector's, off in this version)");
    auto* no_latency = record->add_flag("--no-latency-timestamps", options.no_latency_timestamps, "Do not record them");
    latency->excludes(no_latency);
    record->add_flag("--no-nvtx", options.no_nvtx, "Do not record NVTX ranges");
    record->add_flag("-q,--quiet", options.quiet, "No summary at the end; warnings are still shown");
    record->add_option("--capture-steps", options.capture_steps, "Capture steps A to B inclusive only")
        ->type_name("A:B");
    record
        ->add_option("--capture-every", options.capture_every,
            "Periodic windows: with --capture-length K, capture the steps whose number modulo N is below K")
        ->type_name("N");
    record->add_option("--capture-length", options.capture_length, "Steps per periodic window (1 to N)")
        ->type_name("K");
    record
        ->add_option("--capture-range", options.capture_range,
            "cudaProfilerApi: capture from each cudaProfilerStart to the next cudaProfilerStop")
        ->type_name("RANGE");
    record->add_option("--delay", options.delay, "Start capturing this many seconds after the collector starts")
        ->type_name("SECONDS");
    record->add_option("--duration", options.duration, "Capture for this many seconds (default: to the end)")
        ->type_name("SECONDS");
    record->add_flag("--stats-outside-windows", options.stats_outside_windows,
        "Take tensor statistics outside capture windows too (default: only inside them)");
    record
        ->add_option("--max-size", options.max_size,
            "With periodic windows: drop the oldest windows to keep the trace under this many MiB (16 to 1048576)")
        ->type_name("MIB");
    record->add_flag("--monitor", options.monitor,
        "Always-on monitoring: --capture-every 1000 --capture-length 10 --max-size 2048 unless given");
    // Never filled by CLI11 (split_record_command takes the command out first); listed so --help shows it.
    static std::vector<std::string> command_for_help;
    record->add_option("COMMAND", command_for_help, "The command to record and its arguments, after '--'")
        ->type_name("");
    record->footer(kRecordExamples);
    return record;
}

std::vector<const char*> split_record_command(
    const CLI::App& record, int argc, const char* const* argv, RecordOptions& options)
{
    std::vector<const char*> cli_args(argv, argv + argc);
    // The subcommand is the first argument that is not an option: the main command's options take no values.
    int at = 1;
    while (at < argc && argv[at][0] == '-')
        ++at;
    if (at >= argc || std::string_view(argv[at]) != record.get_name())
        return cli_args;
    for (++at; at < argc; ++at) {
        const std::string_view arg = argv[at];
        if (arg == "--") {
            options.command.assign(argv + at + 1, argv + argc);
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') {
            options.command.assign(argv + at, argv + argc);
            break;
        }
        if (takes_next_argument(record, arg) && at + 1 < argc)
            ++at;
    }
    cli_args.resize(static_cast<size_t>(std::min(at, argc)));
    return cli_args;
}

std::optional<std::string> record_usage_error(const RecordOptions& options)
{
    if (options.command.empty())
        return "record needs a command to run, e.g. fp8scope record -- python train.py";
    if (options.command.front().empty())
        return "the command name is empty";
    if (const CapturePlanResult capture = parse_capture_plan(capture_request(options)); !capture.plan)
        return capture.error;
    return std::nullopt;
}

int run_record(const RecordOptions& options)
{
    const auto library = locate_collector_library();
    if (!library) {
        print_to_stderr(fmt::format("fp8scope: error: {}\n", library.error().message));
        return kExitCollectorMissing;
    }
    const std::string pattern = options.output_pattern.empty() ? "" : prepare_output_pattern(options.output_pattern);
    // Read before configure_environment() replaces it with ours.
    const char* outer = std::getenv("FP8SCOPE_MANIFEST");
    const std::string outer_manifest = outer != nullptr ? outer : "";
    const Manifest manifest = create_manifest();
    configure_environment(options, *library, pattern, manifest);

    const CommandOutcome outcome = run_command(options.command);
    if (manifest.path.empty())
        return outcome.exit_code;
    const std::string manifest_text = read_file(manifest.path);
    const std::vector<std::string> traces = parse_manifest(manifest_text);
    const std::vector<std::string> removed = removed_traces(manifest_text);
    const size_t untraced = count_untraced_processes(manifest_text);
    unlink(manifest.path.c_str());
    if (!outcome.started)
        return outcome.exit_code; // its one error line says it all

    if (!outer_manifest.empty() && outer_manifest != manifest.path)
        append_to_outer_manifest(outer_manifest.c_str(), traces, removed);
    // Processes that initialized CUDA but could not be traced have each printed their warning; repeating that no
    // trace was written would blame CUDA for it.
    if (traces.empty() && untraced == 0)
        print_to_stderr(removed.empty() ? std::string(kNoTraceWarning) : no_gpu_work_warning(removed.size()));
    else if (!options.quiet)
        print_summary(traces, removed.size());
    return outcome.exit_code;
}

} // namespace fp8scope::cli
