#!/usr/bin/env bash
# The analyzer's benchmark (docs/benchmarks.md "Analyzer: `fp8scope report` on 10 M kernels and 10 M API calls"):
# `fp8scope report` on a synthetic trace of 10 M kernels and 10 M API calls, wall time and peak RSS per run, medians
# last; then SQLite's own scan of the same rows (bench/scan_bench.cpp) and the ratio of the two medians. Goals on 2
# cores: <= 10 s and <= 2 GB (that section), <= 3 s and <= 1 GB
# (docs/benchmarks.md "The analyzer at the speed of its storage"), <= 2x the scan at <= 1 GB
# (docs/benchmarks.md "The report against SQLite's own scan"); then `fp8scope info` against `info --read-rows` (issue 47).
#
#   bench/report_bench.sh BUILD_DIR [RUNS] [TRACE]
#
# BUILD_DIR holds bin/fp8scope, bench/fp8scope_make_large_trace and bench/fp8scope_scan_bench. The trace (default
# /tmp/fp8scope-large-10m.sqlite, about 820 MB) is generated once and reused. Exit codes: 0 done, 2 usage error.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 3 ]]; then
    echo "usage: bench/report_bench.sh BUILD_DIR [RUNS] [TRACE]" >&2
    exit 2
fi
build=$1
runs=${2:-3}
trace=${3:-/tmp/fp8scope-large-10m.sqlite}
fp8scope=$build/bin/fp8scope
generator=$build/bench/fp8scope_make_large_trace
scanner=$build/bench/fp8scope_scan_bench
for exe in "$fp8scope" "$generator" "$scanner" /usr/bin/time; do
    [[ -x $exe ]] || { echo "report_bench: missing $exe (build the fp8scope, fp8scope_make_large_trace and fp8scope_scan_bench targets; apt-get install time)" >&2; exit 2; }
done
if [[ ! -s $trace ]]; then
    echo "generating $trace (10 M kernels, 10 M API calls, 1000 steps)..."
    "$generator" --kernels 10000000 --steps 1000 --out "$trace"
fi
walls=() rss=()
for ((i = 1; i <= runs; i++)); do
    log=$(mktemp)
    /usr/bin/time -f '%e %M' -o "$log" "$fp8scope" report "$trace" > /dev/null
    read -r wall kb < "$log"
    rm -f "$log"
    walls+=("$wall")
    rss+=("$kb")
    printf 'run %d: %s s, %.2f GB peak RSS\n' "$i" "$wall" "$(echo "$kb / 1048576" | bc -l)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
goals='goals: <= 10 s and <= 2 GB (issue 4), <= 3 s and <= 1 GB (issue 13)'
printf 'fp8scope report, %d runs: median %s s, median peak RSS %.2f GB (%s)\n' "$runs" \
    "$(median "${walls[@]}")" "$(echo "$(median "${rss[@]}") / 1048576" | bc -l)" "$goals"
# The floor: SQLite stepping through the same rows on one thread, measured in this run, after the reports (the file
# is in the page cache for both).
# The loader's own statements (FP8SCOPE_PRINT_SQL=1, one untimed run): the scan reads exactly their tables and columns.
sql_log=$(mktemp)
FP8SCOPE_PRINT_SQL=1 "$fp8scope" report "$trace" > /dev/null 2> "$sql_log"
scan_lines=$("$scanner" --runs "$runs" --sql "$sql_log" "$trace")
rm -f "$sql_log"
echo "$scan_lines"
scan=$(head -1 <<< "$scan_lines" | sed -E 's/.*median ([0-9.]+) s.*/\1/')
printf 'report / scan inside SQLite: %.2fx (goal: <= 2x, issue 26)\n' "$(echo "$(median "${walls[@]}") / $scan" | bc -l)"
# `fp8scope info` (issue 47): from the finished trace's meta and small tables, against --read-rows (the full load it
# did before), same trace, interleaved runs.
info_fast=() info_full=()
for ((i = 1; i <= runs; i++)); do
    for mode in fast full; do
        log=$(mktemp)
        if [[ $mode == fast ]]; then
            /usr/bin/time -f '%e' -o "$log" "$fp8scope" info "$trace" > /dev/null
            info_fast+=("$(cat "$log")")
        else
            /usr/bin/time -f '%e' -o "$log" "$fp8scope" info --read-rows "$trace" > /dev/null
            info_full+=("$(cat "$log")")
        fi
        rm -f "$log"
    done
done
printf 'fp8scope info, %d runs: median %s s (goal: <= 0.2 s, issue 47); info --read-rows: median %s s\n' "$runs" \
    "$(median "${info_fast[@]}")" "$(median "${info_full[@]}")"
