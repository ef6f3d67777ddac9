#!/usr/bin/env bash
# The multi-rank benchmark (docs/benchmarks.md "Across ranks (64 synthetic ranks)"): the traces of one synthetic job of
# 64 ranks analysed two ways, wall time and peak RSS per round, medians last.
#   path 1: `fp8scope report DIR --format json`: every rank loaded and analysed in one process;
#   path 2: `fp8scope report RANK.sqlite --format json > RANK.json` per rank, $(nproc) at a time (xargs -P), as a
#           scheduler's array job would run them, then `fp8scope report --merge JSON_DIR --format json`. Skipped when
#           the build has no --merge.
# Each path's JSON is checked against what the generator planted (DIR/planted.json): the straggler rank must be the
# one most often last in every collective kind and last at the longest wait; the hosts' clock offsets are shown.
#
#   bench/ranks_bench.sh BUILD_DIR [ROUNDS] [TRACE_DIR]
#
# BUILD_DIR holds bin/fp8scope and bench/fp8scope_make_rank_traces. The traces (default /tmp/fp8scope-ranks-64) are
# generated once and reused while their shape matches. Shape from the environment: RANKS (64), STEPS (200), KERNELS
# (compute kernels per step and rank, 1000), STRAGGLER_RANK (37), STRAGGLER_NS (500000). Needs /usr/bin/time and jq.
# Exit codes: 0 done (also when an answer is wrong: it is printed as WRONG), 1 a run failed, 2 usage error.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 3 ]]; then
    echo "usage: bench/ranks_bench.sh BUILD_DIR [ROUNDS] [TRACE_DIR]" >&2
    exit 2
fi
build=$1
rounds=${2:-3}
traces=${3:-/tmp/fp8scope-ranks-64}
ranks=${RANKS:-64} steps=${STEPS:-200} kernels=${KERNELS:-1000}
straggler=${STRAGGLER_RANK:-37} straggler_ns=${STRAGGLER_NS:-500000}
if ! ((straggler >= 0 && straggler < ranks)); then
    echo "ranks_bench: STRAGGLER_RANK must be a rank (0 to RANKS - 1): the answer is checked against it" >&2
    exit 2
fi
fp8scope=$build/bin/fp8scope
generator=$build/bench/fp8scope_make_rank_traces
for exe in "$fp8scope" "$generator" /usr/bin/time "$(command -v jq || echo jq)"; do
    [[ -x $exe ]] || { echo "ranks_bench: missing $exe (build fp8scope and fp8scope_make_rank_traces; apt-get install time jq)" >&2; exit 2; }
done

shape="--ranks $ranks --steps $steps --kernels-per-step $kernels --straggler-rank $straggler --straggler-ns $straggler_ns"
if [[ ! -s $traces/shape || $(cat "$traces/shape") != "$shape" ]]; then
    rm -f "$traces"/rank-*.sqlite "$traces/shape"
    # shellcheck disable=SC2086 # $shape is a list of arguments
    "$generator" --out "$traces" $shape
    echo "$shape" > "$traces/shape"
fi
echo "traces: $traces ($shape), $(du -sh "$traces" | cut -f1); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
gb() { echo "$1 / 1048576" | bc -l; } # kB -> GB
now() { date +%s.%N; }

# The report's answer against the planted one: one line, OK or WRONG.
check_answer() { # LABEL JSON
    local label=$1 json=$2
    jq -r --argjson r "$straggler" --slurpfile planted "$traces/planted.json" '
        ([.stragglers.by_kind[] | .most_often_last == $r] | all) as $every_kind
        | (.stragglers.longest_wait.last_rank == $r) as $longest
        | ([.steps[] | select(.slowest_rank == $r)] | length) as $slowest
        | ($planted[0].hosts | map({(.host): .clock_offset_ns}) | add) as $offsets
        | ([.clock.hosts[] | (.offset_ns + $offsets[.host]) | fabs] | max) as $clock_error
        | "\(if $every_kind and $longest then "OK" else "WRONG" end): planted straggler rank \($r); most often last: "
          + ([.stragglers.by_kind[] | "\(.kind) rank \(.most_often_last)"] | join(", "))
          + "; longest wait \(.stragglers.longest_wait.max_wait_ns) ns, rank \(.stragglers.longest_wait.last_rank) last"
          + "; slowest rank in \($slowest) of \(.steps | length) common steps"
          + "; \(.clock.hosts | length) host clocks, largest error against the planted offsets \($clock_error) ns"
          + " (residual \(.clock.residual_ns) ns)"
          + "; FP8 scales \(.scales.compared) compared, \(.scales.mismatches) mismatches"' "$json" | sed "s/^/$label answer: /"
}

has_merge=0
if "$fp8scope" report --help | grep -q -- --merge; then has_merge=1; fi
p1_wall=() p1_rss=() p1_cpu=() p2_wall=() p2_cpu=() p2_rank_wall=() p2_rank_rss=() merge_wall=() merge_rss=()
for ((i = 1; i <= rounds; i++)); do
    /usr/bin/time -f '%e %M %U %S' -o "$work/p1.time" "$fp8scope" report "$traces" --format json > "$work/p1.json" \
        || { echo "ranks_bench: path 1 failed" >&2; exit 1; }
    read -r wall kb user sys < "$work/p1.time"
    cpu=$(printf '%.2f' "$(echo "$user + $sys" | bc -l)")
    p1_wall+=("$wall") p1_rss+=("$kb") p1_cpu+=("$cpu")
    printf 'round %d: path 1: %s s wall, %s s CPU, %.2f GB peak RSS\n' "$i" "$wall" "$cpu" "$(gb "$kb")"
    if ((i == 1)); then check_answer "path 1" "$work/p1.json"; fi
    if ((!has_merge)); then
        if ((i == 1)); then echo "path 2: skipped (this build has no --merge)"; fi
        continue
    fi
    rm -rf "$work/json" "$work/times" && mkdir "$work/json" "$work/times"
    start=$(now)
    # shellcheck disable=SC2016 # expanded by the inner shell
    find "$traces" -maxdepth 1 -name '*.sqlite' | sort | xargs -P "$(nproc)" -I{} bash -c \
        'name=$(basename "$1" .sqlite); /usr/bin/time -f "%e %M %U %S" -o "$2/times/$name" "$3" report "$1" --format json > "$2/json/$name.json"' \
        _ {} "$work" "$fp8scope" || { echo "ranks_bench: a per-rank report failed" >&2; exit 1; }
    jobs_wall=$(echo "$(now) - $start" | bc -l)
    walls=() kbs=() jobs_cpu=0
    for f in "$work"/times/*; do
        read -r w k u s < "$f"
        walls+=("$w") kbs+=("$k")
        jobs_cpu=$(echo "$jobs_cpu + $u + $s" | bc -l)
    done
    /usr/bin/time -f '%e %M' -o "$work/merge.time" "$fp8scope" report --merge "$work/json" --format json > "$work/p2.json" \
        || { echo "ranks_bench: --merge failed" >&2; exit 1; }
    read -r mwall mkb < "$work/merge.time"
    json_bytes=$(cat "$work"/json/*.json | wc -c)
    p2_wall+=("$jobs_wall") p2_cpu+=("$jobs_cpu") p2_rank_wall+=("$(median "${walls[@]}")") p2_rank_rss+=("$(median "${kbs[@]}")")
    merge_wall+=("$mwall") merge_rss+=("$mkb")
    printf 'round %d: path 2: %d per-rank jobs in %.2f s wall, %.2f s CPU (each: median %s s, %.2f GB peak RSS, ' "$i" \
        "${#walls[@]}" "$jobs_wall" "$jobs_cpu" "$(median "${walls[@]}")" "$(gb "$(median "${kbs[@]}")")"
    printf 'largest %.2f GB); ' \
        "$(gb "$(printf '%s\n' "${kbs[@]}" | sort -g | tail -1)")"
    printf 'merge %s s, %.3f GB peak RSS, %d JSON bytes in\n' "$mwall" "$(gb "$mkb")" "$json_bytes"
    if ((i == 1)); then check_answer "path 2" "$work/p2.json"; fi
done

printf 'path 1 (report DIR), %d rounds: median %s s wall, %s s CPU, median peak RSS %.2f GB\n' "$rounds" \
    "$(median "${p1_wall[@]}")" "$(median "${p1_cpu[@]}")" "$(gb "$(median "${p1_rss[@]}")")"
if ((has_merge)); then
    printf 'path 2 (per-rank jobs + --merge), %d rounds: jobs median %.2f s wall, %.2f s CPU in all (per rank median %s s, ' \
        "$rounds" "$(median "${p2_wall[@]}")" "$(median "${p2_cpu[@]}")" "$(median "${p2_rank_wall[@]}")"
    printf '%.2f GB), ' "$(gb "$(median "${p2_rank_rss[@]}")")"
    printf 'merge median %s s, %.3f GB\n' "$(median "${merge_wall[@]}")" "$(gb "$(median "${merge_rss[@]}")")"
fi
