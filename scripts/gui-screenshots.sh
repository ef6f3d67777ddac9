#!/usr/bin/env bash
# Regenerates the viewer's screenshots in docs/gui/ (docs/gui.md shows them): fp8scope-gui on the bundled H100 FP8
# drift run with its BF16 reference, under Xvfb at 1400x900, every view and two timeline zooms
# (fp8scope-gui --screenshots DIR). Needs a build with the viewer (scripts/test.sh makes build/test).
set -euo pipefail

cd "$(dirname "$0")/.."
gui="${1:-build/test/bin/fp8scope-gui}"
if [ ! -x "$gui" ]; then
    echo "gui-screenshots: $gui not found; build it first (scripts/test.sh)" >&2
    exit 1
fi
for trace in samples/traces/compare/h100-drift-fp8.sqlite samples/traces/compare/h100-drift-bf16.sqlite; do
    if [ ! -f "$trace" ]; then # stored as $trace.xz, unpacked by CMake's configure (samples/traces/README.md)
        echo "gui-screenshots: $trace not found: configure with cmake first (scripts/test.sh), or xz -dk $trace.xz" >&2
        exit 1
    fi
done
xvfb-run -a -s "-screen 0 1600x1000x24" "$gui" samples/traces/compare/h100-drift-fp8.sqlite \
    --ref samples/traces/compare/h100-drift-bf16.sqlite --screenshots docs/gui
# To 8-bit palettes (pngquant, Debian package pngquant): a third of the bytes, no visible change (issue 46: the tracked
# tree's size).
if command -v pngquant > /dev/null; then
    for png in docs/gui/*.png; do
        pngquant --quality 80-98 --speed 1 --force --output "$png" "$png" || true
    done
else
    echo "gui-screenshots: pngquant not found (apt-get install pngquant): the PNGs stay full colour, about 3x larger" >&2
fi
echo "gui-screenshots: wrote $(ls docs/gui/*.png | wc -l) PNGs in docs/gui/"
