# Every sample trace is stored in git as an archive, none plain (samples/traces/README.md, "How the traces are stored";
# CTest's tree_sample_traces_compressed holds it so): the tracked tree travels to the GPU machine, and plain traces
# made up most of it. An archive is <name>.sqlite.pack (scripts/trace_pack.py: the trace column by column, then xz;
# about half the size of the other kind) or <name>.sqlite.xz (xz of the file). Each configure unpacks every archive
# under samples/traces/ to the <name>.sqlite beside it when that file is missing or older than the archive, so the
# tests, the docs' commands and the scripts keep reading samples/traces/**/*.sqlite. The unpacked files are
# gitignored (/samples/traces/**/*.sqlite). Runs in every configuration, not only with the tests:
# scripts/demo.sh's configure unpacks its trace here, and the README's commands after it read the others.
#
# .pack archives need Python 3 (its standard library: scripts/install-deps.sh installs python3), all of them in one
# call on every core. .xz archives: xz (Debian: xz-utils) or, where it is missing, Python's lzma module (the GPU
# machine guarantees Python, not xz). The globs are re-checked at build time (CONFIGURE_DEPENDS), and the archives are
# configure dependencies, so a pull that adds or changes an archive re-runs this at the next build.

file(GLOB_RECURSE fp8scope_trace_archives CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/samples/traces/*.sqlite.xz")
file(GLOB_RECURSE fp8scope_trace_packs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/samples/traces/*.sqlite.pack")
list(SORT fp8scope_trace_archives)
list(SORT fp8scope_trace_packs)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${fp8scope_trace_archives} ${fp8scope_trace_packs})

# The .pack archives whose trace is missing or older, unpacked together by one Python process (trace_pack.py unpacks
# each to a temporary name of its own and renames it into place, as below).
set(_fp8scope_stale_packs)
foreach(archive IN LISTS fp8scope_trace_packs)
    string(REGEX REPLACE "\\.pack$" "" trace "${archive}")
    if(NOT EXISTS "${trace}" OR "${archive}" IS_NEWER_THAN "${trace}")
        list(APPEND _fp8scope_stale_packs "${archive}")
    endif()
endforeach()
if(_fp8scope_stale_packs)
    find_program(FP8SCOPE_UNPACK_PYTHON NAMES python3 python DOC "Python 3, to unpack samples/traces/**/*.sqlite.pack")
    if(NOT FP8SCOPE_UNPACK_PYTHON)
        message(FATAL_ERROR " cannot unpack samples/traces/**/*.sqlite.pack: python3 was not found; install it "
                            "(scripts/install-deps.sh does) and re-run cmake")
    endif()
    execute_process(COMMAND "${FP8SCOPE_UNPACK_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/trace_pack.py" unpack-all
        ${_fp8scope_stale_packs} RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        string(STRIP "${err}" err)
        string(REGEX REPLACE ".*\n" "" err "${err}")
        message(FATAL_ERROR " ${err} (exit ${rc}); fix that and re-run cmake, or unpack one by hand: "
                            "python3 scripts/trace_pack.py unpack samples/traces/DIR/NAME.sqlite.pack")
    endif()
endif()
list(LENGTH _fp8scope_stale_packs _fp8scope_packs_unpacked)

# Two build folders may configure at once from one source tree: each writes its own temporary file beside the target
# and renames it into place (atomic on one file system), so no reader, and no later configure, sees a half-written
# trace that looks newer than its archive.
string(MD5 _fp8scope_unpack_tag "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${_fp8scope_unpack_tag}" 0 8 _fp8scope_unpack_tag)

set(_fp8scope_unpacked 0)
foreach(archive IN LISTS fp8scope_trace_archives)
    string(REGEX REPLACE "\\.xz$" "" trace "${archive}")
    if(EXISTS "${trace}" AND NOT "${archive}" IS_NEWER_THAN "${trace}")
        continue()
    endif()
    file(RELATIVE_PATH archive_rel "${PROJECT_SOURCE_DIR}" "${archive}")
    if(NOT FP8SCOPE_XZ AND NOT FP8SCOPE_UNPACK_PYTHON)
        find_program(FP8SCOPE_XZ xz DOC "xz, to unpack samples/traces/**/*.sqlite.xz")
        if(NOT FP8SCOPE_XZ)
            find_program(FP8SCOPE_UNPACK_PYTHON NAMES python3 python DOC "Python (lzma) when xz is missing")
        endif()
    endif()
    set(partial "${trace}.unpacking-${_fp8scope_unpack_tag}")
    if(FP8SCOPE_XZ)
        execute_process(COMMAND "${FP8SCOPE_XZ}" -dc "${archive}" OUTPUT_FILE "${partial}"
            RESULT_VARIABLE rc ERROR_VARIABLE err)
    elseif(FP8SCOPE_UNPACK_PYTHON)
        execute_process(COMMAND "${FP8SCOPE_UNPACK_PYTHON}" -c
            "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'), 1 << 20)"
            "${archive}" "${partial}" RESULT_VARIABLE rc ERROR_VARIABLE err)
    else()
        message(FATAL_ERROR " cannot unpack ${archive_rel}: neither xz nor python3 was found; "
                            "install xz-utils (scripts/install-deps.sh does) and re-run cmake")
    endif()
    if(NOT rc EQUAL 0)
        file(REMOVE "${partial}")
        string(STRIP "${err}" err)
        string(REGEX REPLACE ".*\n" "" err "${err}") # the last line (xz's only one, Python's exception)
        # The leading space keeps CMake from wrapping the message: one line, whole in any log.
        message(FATAL_ERROR " cannot unpack ${archive_rel}: ${err} (exit ${rc}); fix that and re-run cmake, "
                            "or unpack it by hand: xz -dkf ${archive_rel}")
    endif()
    file(RENAME "${partial}" "${trace}")
    math(EXPR _fp8scope_unpacked "${_fp8scope_unpacked} + 1")
endforeach()
list(LENGTH fp8scope_trace_archives _fp8scope_archive_count)
list(LENGTH fp8scope_trace_packs _fp8scope_pack_count)
message(STATUS "Sample traces: ${_fp8scope_pack_count} packed and ${_fp8scope_archive_count} xz archives in "
               "samples/traces, ${_fp8scope_packs_unpacked} and ${_fp8scope_unpacked} unpacked now")
