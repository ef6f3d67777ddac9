#!/usr/bin/env bash
# Byte-identical outputs of two fp8scope builds (a restructure must change no output). Runs every report format (text,
# json, md, html, junit and the three csv tables), the FP8 what-if (text and json), info, check, compare and export on
# every sample trace (samples/traces/**/*.sqlite, unpacked by a configure), the rank sets and the compare pairs (and
# compare's what-if), and on an extra trace (the 10 M benchmark trace, bench/report_bench.sh) when given; diffs stdout,
# stderr, the exit code and the files written.
#
#   scripts/compare_builds.sh BEFORE_FP8SCOPE AFTER_FP8SCOPE [EXTRA_TRACE ...]
#
# Prints one line per difference and a count last. Exit codes: 0 identical, 1 a difference, 2 usage error.
set -uo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: scripts/compare_builds.sh BEFORE_FP8SCOPE AFTER_FP8SCOPE [EXTRA_TRACE ...]" >&2
    exit 2
fi
before=$1 after=$2
shift 2
for exe in "$before" "$after"; do
    [[ -x $exe ]] || { echo "compare_builds: $exe is not an executable" >&2; exit 2; }
done
# Absolute executables: run() changes into each side's folder.
before=$(realpath "$before") after=$(realpath "$after")
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/fp8scope-compare-builds.XXXXXX")
[[ -n ${FP8SCOPE_KEEP_WORK:-} ]] || trap 'rm -rf "$work"' EXIT

mapfile -t traces < <(find samples/traces -name '*.sqlite' -type f | sort)
traces+=("$@")
if [[ ${#traces[@]} -eq 0 ]]; then
    echo "compare_builds: no trace in samples/traces (configure a build folder first: it unpacks the archives)" >&2
    exit 2
fi

cases=0 differences=0
# run NAME ARGS...: the same command with each build (WORKDIR/out stands for a written file), then the diffs.
run() {
    local name=$1
    shift
    local side exe
    for side in before after; do
        exe=$before
        [[ $side == after ]] && exe=$after
        mkdir -p "$work/$side/out"
        local args=("${@//@OUT@/$work/$side/out}")
        (cd "$work/$side" && FP8SCOPE_NO_PROGRESS=1 NO_COLOR=1 "$exe" "${args[@]}" \
            >"$work/$side/stdout" 2>"$work/$side/stderr" </dev/null)
        local rc=$?
        echo $rc >"$work/$side/rc"
        if [[ $rc -ge 126 ]]; then
            echo "compare_builds: '$name' could not run with $exe (exit $rc): $(head -c 300 "$work/$side/stderr")" >&2
            exit 2
        fi
        # Paths of the side's own folder are the only expected difference.
        sed -i "s#$work/$side#WORK#g" "$work/$side/stdout" "$work/$side/stderr"
    done
    cases=$((cases + 1))
    local what
    for what in rc stdout stderr; do
        if ! cmp -s "$work/before/$what" "$work/after/$what"; then
            echo "DIFF $what: $name"
            differences=$((differences + 1))
        fi
    done
    if ! diff -r -q "$work/before/out" "$work/after/out" >/dev/null; then
        echo "DIFF files: $name"
        differences=$((differences + 1))
    fi
    rm -rf "$work/before/out" "$work/after/out"
}

for trace in "${traces[@]}"; do
    t=$(realpath "$trace")
    for format in text json md html junit; do
        run "report $format $trace" report "$t" --format "$format" --no-progress
    done
    for table in steps kernels api; do
        run "report csv $table $trace" report "$t" --format csv --table "$table" --top 50 --no-progress
    done
    run "report all-steps $trace" report "$t" --all-steps --warmup 0 --no-progress
    # The what-if reads the shipped GEMM tables (share/fp8scope/gemm_tables beside each build's binary).
    run "report fp8-whatif $trace" report "$t" --fp8-whatif --no-progress
    run "report fp8-whatif json $trace" report "$t" --fp8-whatif --format json --no-progress
    run "info $trace" info "$t"
    run "info json $trace" info "$t" --format json
    run "check $trace" check "$t" --max-bubble-ratio 0.3 --junit @OUT@/check.xml --no-progress
    run "export $trace" export "$t" --perfetto @OUT@/trace.json --no-progress
done

# Rank sets (a directory of per-rank traces) and compare pairs.
for dir in samples/traces/ranks/*/; do
    d=$(realpath "$dir")
    run "report ranks $dir" report "$d" --no-progress
    run "report ranks json $dir" report "$d" --format json --no-progress
    run "check ranks $dir" check "$d" --max-bubble-ratio 0.5 --no-progress
done
pairs=(compare/h100-drift-fp8:compare/h100-drift-bf16 compare/h100-clean-fp8:compare/h100-clean-bf16
    compare/h100-current-fp8:compare/h100-clean-bf16 h100-train-fp8:h100-train-bf16
    h200-train-fp8-planted-overflow:h200-train-bf16-stats)
for pair in "${pairs[@]}"; do
    a=$(realpath "samples/traces/${pair%%:*}.sqlite") b=$(realpath "samples/traces/${pair##*:}.sqlite")
    [[ -f $a && -f $b ]] || { echo "compare_builds: missing pair $pair" >&2; continue; }
    for format in text json md html junit; do
        run "compare $format $pair" compare "$a" "$b" --format "$format" --no-progress
    done
    run "check ref $pair" check "$a" --ref "$b" --no-progress
    run "compare fp8-whatif $pair" compare "$a" "$b" --fp8-whatif --no-progress
done

echo "compare_builds: $cases cases on ${#traces[@]} traces, $differences differences"
[[ $differences -eq 0 ]]
