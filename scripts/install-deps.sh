#!/usr/bin/env bash
# Installs the Debian packages fp8scope builds with, only those that are missing. Idempotent: a second run
# installs nothing. Prints one line saying what it did.
#   --fuzz  also what the fuzz build needs (docs/reliability.md): clang 19 with its libFuzzer and sanitizer
#           runtimes, and the sqlite3 command that scripts/fuzz_corpus.sh shrinks traces with.
set -euo pipefail

packages=(
    build-essential
    cmake
    pkg-config
    libsqlite3-dev
    catch2
    libcli11-dev
    nlohmann-json3-dev
    libfmt-dev
    zlib1g-dev
    # scripts/check_format.sh, which scripts/test.sh runs first: the sources are formatted with clang-format 14.
    clang-format-14
    # The configure step unpacks the sample traces: samples/traces/**/*.sqlite.pack with Python 3's standard library
    # (scripts/trace_pack.py; the Python package's tests need it too), *.sqlite.xz with xz.
    python3
    xz-utils
    # The viewer (gui/): Qt 6 Widgets, Charts and Concurrent. Qt Charts' CMake package needs Qt OpenGL's, which
    # qt6-base-dev only recommends (and recommends are not installed here). xvfb and xauth run it without a
    # display (xvfb-run, for the screenshots); the tests use Qt's offscreen platform and need neither.
    qt6-base-dev
    libqt6opengl6-dev
    qt6-charts-dev
    fonts-dejavu-core
    xvfb
    xauth
)
if [ "${1:-}" = "--fuzz" ]; then
    packages+=(clang-19 libclang-rt-19-dev sqlite3)
fi

missing=()
for package in "${packages[@]}"; do
    # dpkg -s also succeeds for packages removed with their config files left; only "install ok installed" counts.
    if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; then
        missing+=("$package")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
        exit 1
    fi
    sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >/dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: installed ${missing[*]}"
