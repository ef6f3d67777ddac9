#!/usr/bin/env bash
# Runs every fuzz target for a set time (docs/reliability.md):
#   [FUZZ_TARGETS="loader rows"] scripts/fuzz.sh BUILD_DIR SECONDS_PER_TARGET [JOBS]
# FUZZ_TARGETS picks targets (default all five). BUILD_DIR holds bin/fuzz_<target>, or bin/fuzz_all with every
# target in one binary (a build with -DFP8SCOPE_BUILD_FUZZERS=ON), and the seeds of
# scripts/fuzz_corpus.sh in fuzz-corpus/; it may also be a copy of just those two directories on another machine
# (the binaries are self-contained). JOBS (default 1) fuzzing processes run each target side by side (-jobs=JOBS
# -workers=JOBS), so a target gets JOBS x SECONDS CPU-seconds. The targets run one after another.
# Writes under FUZZ_OUT (default BUILD_DIR/fuzz-run): corpus/<target>/ (the inputs each run added; a later run goes
# on from them), findings/<target>/ (crash-*, leak-*, timeout-*, oom-* inputs), logs/<target>/.
# Prints per target: executions, exec/s, coverage (cov, ft) from libFuzzer's final figures, CPU-seconds, findings.
# Exits 1 when any target found a crash, leak, timeout or out-of-memory (keep each such input in
# fuzz/regressions/<target>/ once fixed), 2 on a usage error.
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: scripts/fuzz.sh BUILD_DIR SECONDS_PER_TARGET [JOBS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
jobs=${3:-1}
case "$seconds$jobs" in *[!0-9]*) echo "fuzz.sh: SECONDS and JOBS are whole numbers" >&2; exit 2 ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$build/fuzz-run}
read -r -a targets <<<"${FUZZ_TARGETS:-loader report compare nsight rows}"

# Inputs larger than the largest seed let the mutator grow traces; fuzz_rows reads programs, not files.
max_len() {
    case "$1" in
        rows) echo 8192 ;;
        compare) echo 262144 ;;
        *) echo 131072 ;;
    esac
}

printf '%-8s %12s %9s %7s %7s %9s %8s\n' target executions exec/s cov ft cpu_s findings
failed=0
for target in "${targets[@]}"; do
    binary="$build/bin/fuzz_$target"
    if [ ! -x "$binary" ] && [ -x "$build/bin/fuzz_all" ]; then
        binary="$build/bin/fuzz_all" # every target in one binary (fuzz/fuzz_all.cpp)
        export FP8SCOPE_FUZZ_TARGET=$target
    fi
    if [ ! -x "$binary" ]; then
        echo "fuzz.sh: $binary not found" >&2
        exit 2
    fi
    corpus="$out/corpus/$target"
    findings="$out/findings/$target"
    logs="$out/logs/$target"
    mkdir -p "$corpus" "$findings" "$logs"
    rm -f "$logs"/*.log
    seeds=()
    [ -d "$build/fuzz-corpus/$target" ] && seeds+=("$build/fuzz-corpus/$target")
    [ -d "$repo/fuzz/regressions/$target" ] && seeds+=("$repo/fuzz/regressions/$target")
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")"
        -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "${seeds[@]}")
    if [ "$jobs" -gt 1 ]; then
        # Each job writes fuzz-N.log in the working directory.
        (cd "$logs" && "$binary" -jobs="$jobs" -workers="$jobs" "${args[@]}" >"$logs/main.log" 2>&1)
    else
        "$binary" "${args[@]}" >"$logs/fuzz-0.log" 2>&1
    fi
    # Sums over the jobs' logs: executions and exec/s; the largest coverage any job reached.
    read -r executions rate cov ft < <(awk '
        /^stat::number_of_executed_units:/ { runs += $2 }
        /^stat::average_exec_per_sec:/ { rate += $2 }
        / cov: / { for (i = 1; i < NF; ++i) { if ($i == "cov:" && $(i + 1) > c[FILENAME]) c[FILENAME] = $(i + 1);
                                               if ($i == "ft:" && $(i + 1) > f[FILENAME]) f[FILENAME] = $(i + 1) } }
        END { for (k in c) if (c[k] > cov) cov = c[k]; for (k in f) if (f[k] > ft) ft = f[k];
              printf "%d %d %d %d\n", runs, rate, cov, ft }' "$logs"/fuzz-*.log)
    found=$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    printf '%-8s %12s %9s %7s %7s %9s %8s\n' "$target" "$executions" "$rate" "$cov" "$ft" $((seconds * jobs)) "$found"
    if [ "$found" -ne 0 ]; then
        failed=1
        find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
            -printf '  %p\n'
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "fuzz.sh: findings above; logs in $out/logs"
    exit 1
fi
echo "fuzz.sh: no crash, leak, timeout or out-of-memory in ${#targets[@]} targets ($(date -u +%F), $(nproc) cores)"
