#!/usr/bin/env bash
# Checks that every tracked C++ and CUDA source is formatted as the repository's .clang-format says (scripts/test.sh
# runs it first). Prints the files that are not, and how to fix them:
#
#   scripts/check_format.sh          check (exit 0 formatted, 1 not, 2 no clang-format)
#   scripts/check_format.sh --fix    format them in place
#
# The formatter is clang-format 14 (Debian 12's clang-format package, which scripts/install-deps.sh installs), or
# $CLANG_FORMAT: another version may format a few constructs differently.
set -uo pipefail

cd "$(dirname "$0")/.."
formatter=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [[ -z $formatter ]]; then
    echo "check_format: clang-format not found (apt-get install clang-format)" >&2
    exit 2
fi
# The tracked sources; outside a git checkout (an exported tree), the same files found by name.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
else
    mapfile -t files < <(find analyzer bench cli collector common format fuzz gui present probes samples tests \
        -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi
if [[ ${#files[@]} -eq 0 ]]; then
    echo "check_format: no source file found" >&2
    exit 2
fi
if [[ ${1:-} == --fix ]]; then
    printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 20 "$formatter" -i
    echo "check_format: formatted ${#files[@]} files"
    exit 0
fi
unformatted=()
for f in "${files[@]}"; do
    "$formatter" --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [[ ${#unformatted[@]} -ne 0 ]]; then
    printf 'not formatted: %s\n' "${unformatted[@]}"
    echo "check_format: ${#unformatted[@]} of ${#files[@]} files not formatted; run scripts/check_format.sh --fix"
    exit 1
fi
echo "check_format: ${#files[@]} files formatted"
