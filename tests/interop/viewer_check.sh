#!/usr/bin/env bash
# Opens `fp8scope export --perfetto` in a real trace viewer: Chrome's trace viewer (catapult, the viewer behind
# chrome://tracing), made into a page by catapult's own trace2html and loaded in headless Chromium
# (docs/export.md, "Checked with the real tools").
#
#   tests/interop/viewer_check.sh FP8SCOPE TRACE.sqlite OUT_DIR [export options, e.g. --steps 10:11]
#
# Needs: chromium (Debian: apt-get install chromium), a catapult checkout in $FP8SCOPE_CATAPULT_DIR (its
# tracing/bin/trace2html and what that imports: tracing/, common/py_vulcanize, third_party/), python3.
# Writes OUT_DIR/trace.json (the export), trace.html (trace2html's page), viewer.json (what the viewer built: its
# import warnings, processes, threads, slices, flows; compared with the file) and trace.png (a screenshot).
# In the screenshot: ZOOM_MS=A:B shows only that time range (ms from the trace's start), SELECT=PREFIX selects the first
# slice there whose name starts so (its args show below the tracks), HEIGHT is the height in px.
# Exit codes: 0 the viewer imported the file with no error or warning and holds every slice and flow of it, 1 it did
# not, 2 usage error, 77 chromium or catapult is missing (skipped).
set -euo pipefail

if [[ $# -lt 3 ]]; then
    echo "usage: $0 FP8SCOPE TRACE.sqlite OUT_DIR [export options]" >&2
    exit 2
fi
fp8scope=$1 trace=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-chromium}
catapult=${FP8SCOPE_CATAPULT_DIR:-}
python=${PYTHON:-python3}

if ! command -v "$chromium" > /dev/null; then
    echo "viewer_check: skipped: no $chromium on PATH" >&2
    exit 77
fi
if [[ -z $catapult || ! -f $catapult/tracing/bin/trace2html ]]; then
    echo "viewer_check: skipped: FP8SCOPE_CATAPULT_DIR does not hold catapult (tracing/bin/trace2html)" >&2
    exit 77
fi

if [[ ! -f $trace && -f $trace.xz ]]; then # stored compressed, unpacked by CMake (samples/traces/README.md)
    echo "viewer_check: $trace not found: configure with cmake first, or xz -dk $trace.xz" >&2
    exit 2
fi
mkdir -p "$out"
"$fp8scope" export "$trace" --perfetto "$out/trace.json" "$@"
"$python" "$catapult/tracing/bin/trace2html" "$out/trace.json" --output "$out/trace.html" > /dev/null
zoom=()
[[ -n ${ZOOM_MS:-} ]] && zoom+=(--zoom-ms "$ZOOM_MS")
[[ -n ${SELECT:-} ]] && zoom+=(--select "$SELECT")
"$python" "$here/trace_viewer_capture.py" --chromium "$chromium" --html "$out/trace.html" --png "$out/trace.png" \
    --export "$out/trace.json" --height "${HEIGHT:-1000}" "${zoom[@]}" > "$out/viewer.json" && status=0 || status=$?
cat "$out/viewer.json"
exit "$status"
