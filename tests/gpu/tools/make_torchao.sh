#!/usr/bin/env bash
# Makes .torchao/ at the repository root: the pure-Python part of torchao that `import torchao.float8` reaches,
# exported from a git copy of github.com/pytorch/ao, for the zoo's torchao workloads (tests/gpu/zoo/torchao_mlp.py)
# on a GPU machine where torchao is not installed. Nothing is built and no C++/CUDA extension is taken: the
# workloads run it with TORCHAO_FORCE_SKIP_LOADING_SO_FILES=1.
#
#   tests/gpu/tools/make_torchao.sh [GIT_DIR [REF]]
#       GIT_DIR  a git directory of pytorch/ao (default $TORCHAO_GIT_DIR, else /work/.mirror/pytorch+ao/repo)
#       REF      the tag or commit to export (default $TORCHAO_REF, else v0.18.0: the release built for
#                PyTorch 2.11, the GPU machine's version)
#
# What it writes (.torchao/ is in .gitignore: torchao's source is never committed here):
#   .torchao/torchao/...                   the files tests/gpu/tools/torchao_closure.py finds from torchao and
#                                          torchao.float8 by following every import statement (lazy and optional
#                                          ones included), and nothing else
#   .torchao/torchao-<version>.dist-info/  METADATA (Name, Version: importlib.metadata.version("torchao") works),
#                                          LICENSE (torchao's BSD 3-clause licence, which travels with its source)
#   .torchao/SOURCE                        the repository, ref, commit and file count it came from
# It fails when the result is over 6 MiB. The device tool carries .torchao/ when the run names it in `carry`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
git_dir=${1:-${TORCHAO_GIT_DIR:-/work/.mirror/pytorch+ao/repo}}
ref=${2:-${TORCHAO_REF:-v0.18.0}}
out=$repo/.torchao
limit=$((6 << 20))

if ! commit=$(git --git-dir="$git_dir" rev-parse --verify --quiet "$ref^{commit}"); then
    echo "make_torchao.sh: no commit '$ref' in git directory '$git_dir'" >&2
    exit 2
fi
version=$(git --git-dir="$git_dir" show "$commit:version.txt" | tr -d '[:space:]')

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$git_dir" archive "$commit" torchao | tar -x -C "$tmp"
python3 "$here/torchao_closure.py" "$tmp" > "$tmp/files.txt"
count=$(wc -l < "$tmp/files.txt")
if [[ $count -eq 0 ]]; then
    echo "make_torchao.sh: found no torchao files at $ref" >&2
    exit 1
fi

rm -rf "$out"
mkdir -p "$out"
(cd "$tmp" && tar -cf - -T files.txt) | tar -x -C "$out"
dist=$out/torchao-$version.dist-info
mkdir -p "$dist"
printf 'Metadata-Version: 2.1\nName: torchao\nVersion: %s\nSummary: %s\n' "$version" \
    "pure-Python float8 training path exported by fp8scope's tests/gpu/tools/make_torchao.sh (no extensions)" \
    > "$dist/METADATA"
git --git-dir="$git_dir" show "$commit:LICENSE" > "$dist/LICENSE"
printf 'repository pytorch/ao\nref %s\ncommit %s\nversion %s\nfiles %s\n' "$ref" "$commit" "$version" "$count" \
    > "$out/SOURCE"

bytes=$(du -sb "$out" | cut -f1)
echo "make_torchao.sh: $out: torchao $version ($ref, ${commit:0:12}), $count Python files, $((bytes >> 10)) KiB"
if [[ $bytes -gt $limit ]]; then
    echo "make_torchao.sh: $out is over $((limit >> 20)) MiB" >&2
    exit 1
fi
