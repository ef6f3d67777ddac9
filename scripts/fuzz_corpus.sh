#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets (docs/reliability.md):
#   scripts/fuzz_corpus.sh BUILD_DIR [OUT_DIR]
# OUT_DIR (default BUILD_DIR/fuzz-corpus) gets one directory per target:
#   - the scenario seeds of BUILD_DIR/bin/fuzz_seeds: traces in our format and the nsys layout, compare pairs, row
#     programs;
#   - every real trace of samples/traces/ shrunk to a small file (loader, report): the same schema, the first ROWS
#     rows of each activity table, the dictionaries (sites, GPUs, enums) whole, the kernel configurations and
#     strings the kept rows refer to, the recorded row counts made true, 512-byte pages;
#   - compare pairs of the shrunk samples/traces/compare/ traces.
# Needs the sqlite3 command (Debian: sqlite3). ROWS (environment, default 25) sets the rows kept per table.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: scripts/fuzz_corpus.sh BUILD_DIR [OUT_DIR]" >&2
    exit 2
fi
build=$1
out=${2:-$build/fuzz-corpus}
rows=${ROWS:-25}
repo=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v sqlite3 >/dev/null; then
    echo "fuzz_corpus: the sqlite3 command is missing (Debian: apt-get install sqlite3)" >&2
    exit 1
fi
if [ ! -x "$build/bin/fuzz_seeds" ]; then
    echo "fuzz_corpus: $build/bin/fuzz_seeds not found: build the fuzz targets first (docs/reliability.md)" >&2
    exit 1
fi

# Every sample trace is stored as <name>.sqlite.pack or <name>.sqlite.xz; CMake's configure unpacks them
# (samples/traces/README.md).
while IFS= read -r archive; do
    trace=${archive%.*}
    if [ ! -f "$trace" ] || [ "$archive" -nt "$trace" ]; then
        echo "fuzz_corpus: $trace is not unpacked: configure with cmake first, or python3 scripts/trace_pack.py unpack $archive (xz -dkf for an .xz)" >&2
        exit 1
    fi
done < <(find "$repo/samples/traces" -name '*.sqlite.xz' -o -name '*.sqlite.pack')

"$build/bin/fuzz_seeds" "$out"

# Tables copied whole: what other rows refer to by id, and the one-row tables.
is_dictionary() {
    case "$1" in
        StringIds | FP8SCOPE_META | FP8SCOPE_KERNEL_CONFIG | FP8SCOPE_TENSOR_SITE | ThreadNames | TARGET_INFO_* | ENUM_* | \
            META_DATA_* | FP8SCOPE_CAPTURE_WINDOW) return 0 ;;
        *) return 1 ;;
    esac
}

# shrink SRC DST: the small copy described above.
shrink() {
    local src=$1 dst=$2 table
    rm -f "$dst"
    sqlite3 "$src" "SELECT sql || ';' FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL
        AND name NOT LIKE 'sqlite_%';" | sqlite3 "$dst"
    while IFS= read -r table; do
        local limit=""
        is_dictionary "$table" || limit="LIMIT $rows"
        sqlite3 "$dst" "ATTACH '$src' AS src; INSERT INTO main.\"$table\" SELECT * FROM src.\"$table\" $limit;"
    done < <(sqlite3 "$src" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%';")
    # Kernel configurations no kept kernel launched, then strings no kept row refers to: any column of any other table holding the id keeps a string (a number that only
    # looks like one keeps a few more, which is harmless). NULLs are left out: NOT IN a list with a NULL is never true.
    if sqlite3 "$dst" "SELECT 1 FROM sqlite_master WHERE name = 'FP8SCOPE_KERNEL'" | grep -q 1; then
        sqlite3 "$dst" "DELETE FROM FP8SCOPE_KERNEL_CONFIG WHERE id NOT IN (SELECT configId FROM FP8SCOPE_KERNEL);"
    fi
    local referenced
    referenced=$(sqlite3 "$dst" "SELECT group_concat('SELECT \"' || c.name || '\" FROM \"' || m.name
        || '\" WHERE \"' || c.name || '\" IS NOT NULL', ' UNION ')
        FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name <> 'StringIds'
        AND m.name NOT LIKE 'sqlite_%';")
    if [ -n "$referenced" ] && sqlite3 "$dst" "SELECT 1 FROM sqlite_master WHERE name = 'StringIds'" | grep -q 1; then
        sqlite3 "$dst" "DELETE FROM StringIds WHERE id NOT IN ($referenced);"
    fi
    sqlite3 "$src" "SELECT sql || ';' FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL;" | sqlite3 "$dst"
    # The loader checks PRAGMA user_version against the meta's schema version.
    sqlite3 "$dst" "PRAGMA user_version = $(sqlite3 "$src" "PRAGMA user_version;");"
    # Finished traces of schema 1.2 on record every table's row count; the loader refuses counts that do not match.
    if sqlite3 "$dst" "SELECT 1 FROM sqlite_master WHERE name = 'FP8SCOPE_META'" | grep -q 1; then
        while IFS= read -r table; do
            sqlite3 "$dst" "UPDATE FP8SCOPE_META SET value = (SELECT count(*) FROM \"$table\")
                WHERE key = 'row_count.$table';"
        done < <(sqlite3 "$dst" "SELECT substr(key, 11) FROM FP8SCOPE_META WHERE key LIKE 'row_count.%';")
    fi
    sqlite3 "$dst" "PRAGMA page_size=512; VACUUM;"
}

# pair RUN REF DST: fuzz_compare's input, a 4-byte little-endian length of RUN, then RUN and REF.
pair() {
    local size
    size=$(stat -c %s "$1")
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((size & 255)) $((size >> 8 & 255)) $((size >> 16 & 255)) \
        $((size >> 24 & 255)))" >"$3"
    cat "$1" "$2" >>"$3"
}

shrunk=0
while IFS= read -r trace; do
    name=$(basename "$trace" .sqlite)
    shrink "$trace" "$out/loader/real-$name.sqlite"
    cp "$out/loader/real-$name.sqlite" "$out/report/real-$name.sqlite"
    shrunk=$((shrunk + 1))
done < <(find "$repo/samples/traces" -name '*.sqlite' | sort)

compare="$repo/samples/traces/compare"
for run_ref in "h100-drift-fp8 h100-clean-fp8" "h100-clean-fp8 h100-clean-fp8" "h100-drift-fp8 h100-drift-bf16" \
    "h100-current-fp8 h100-clean-fp8"; do
    read -r run ref <<<"$run_ref"
    pair "$out/loader/real-$run.sqlite" "$out/loader/real-$ref.sqlite" "$out/compare/real-$run-vs-$ref.pair"
done

largest=$(find "$out" -type f -printf '%s %p\n' | sort -n | tail -1)
echo "fuzz_corpus: $shrunk real traces shrunk to $rows rows per table; corpora in $out; largest seed: $largest"
