# Every sample trace is stored in git as <name>.sqlite.xz, none plain (samples/traces/README.md, "How the traces are
# stored"; CTest's tree_sample_traces_compressed holds it so): the tracked tree travels to the GPU machine, and plain
# traces made up most of it. Each configure unpacks every samples/traces/**/*.sqlite.xz to the <name>.sqlite beside
# it when that file is missing or older than the archive, so the tests, the docs' commands and the scripts keep
# reading samples/traces/**/*.sqlite. The unpacked files are gitignored (/samples/traces/**/*.sqlite). Runs in every
# configuration, not only with the tests: scripts/demo.sh's configure unpacks its trace here, and the README's
# commands after it read the others.
#
# xz (Debian: xz-utils, which scripts/install-deps.sh installs) decompresses; where it is missing, Python's lzma
# module does (the GPU machine guarantees Python, not xz). The glob is re-checked at build time
# (CONFIGURE_DEPENDS), and the archives are configure dependencies, so a pull that adds or changes an archive
# re-runs this at the next build.

file(GLOB_RECURSE fp8scope_trace_archives CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/samples/traces/*.sqlite.xz")
list(SORT fp8scope_trace_archives)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${fp8scope_trace_archives})

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
message(STATUS "Sample traces: ${_fp8scope_archive_count} xz archives in samples/traces, "
               "${_fp8scope_unpacked} unpacked now")
