# cmake -DSOURCE_DIR=<repository> -P check_sample_traces.cmake (tests/tree/CMakeLists.txt): no
# samples/traces/**/*.sqlite is tracked (every trace is stored as <name>.sqlite.pack or <name>.sqlite.xz,
# samples/traces/README.md), no trace is stored both ways, and every archive's unpacked .sqlite is gitignored (CMake
# writes it beside the archive). Prints "tree check skipped: ..." (the test's skip pattern) where git cannot say what is tracked.
include("${CMAKE_CURRENT_LIST_DIR}/tree_git.cmake")
if(NOT tree_git_ok)
    return()
endif()

# "*" in a git pathspec matches across "/": these list the whole of samples/traces/.
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" -c core.quotePath=false ls-files --
        "samples/traces/*.sqlite" "samples/traces/*.sqlite.xz" "samples/traces/*.sqlite.pack"
    RESULT_VARIABLE rc OUTPUT_VARIABLE tracked ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ls-files failed: ${err}")
endif()
string(REPLACE "\n" ";" tracked "${tracked}")

set(problems "")
set(archives 0)
foreach(path IN LISTS tracked)
    if(path STREQUAL "")
        continue()
    endif()
    if(path MATCHES "\\.sqlite$")
        # Any size: the small ones added up to 14 MiB of the tree before they were compressed
        # (docs/benchmarks.md "Compressed sample traces: tracked tree size and the configure-time unpack").
        string(CONCAT problem "${path}: tracked plain: store it as ${path}.pack (scripts/trace_pack.py pack "
                              "${path}), then git rm --cached ${path} (samples/traces/README.md)")
        list(APPEND problems "${problem}")
        continue()
    endif()
    math(EXPR archives "${archives} + 1")
    string(REGEX REPLACE "\\.(xz|pack)$" "" unpacked "${path}")
    # Two archives of one trace: the configure would unpack both to the same file.
    list(FIND seen_traces "${unpacked}" seen_at) # not IN_LIST: a -P script runs under the old policies
    if(NOT seen_at EQUAL -1)
        list(APPEND problems "${path}: ${unpacked} is stored twice (as .pack and .xz): git rm one")
    endif()
    list(APPEND seen_traces "${unpacked}")
    # Exit 0 only for an ignored path that is not tracked (check-ignore reports no tracked file as ignored).
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" check-ignore -q "${unpacked}" RESULT_VARIABLE ignored)
    if(NOT ignored EQUAL 0)
        string(CONCAT problem "${path}: its unpacked ${unpacked} is tracked or not gitignored (.gitignore's "
                              "/samples/traces/**/*.sqlite covers it unless a ! pattern or git add -f undid that)")
        list(APPEND problems "${problem}")
    endif()
endforeach()

if(problems)
    foreach(problem IN LISTS problems)
        message(NOTICE "${problem}") # NOTICE: unwrapped, one line each
    endforeach()
    list(LENGTH problems count)
    message(FATAL_ERROR " ${count} problem(s) with the tracked sample traces, listed above")
endif()
message(STATUS "samples/traces: ${archives} traces tracked, every one as an .sqlite.pack or .sqlite.xz archive "
               "whose unpacked file is gitignored; no plain .sqlite tracked")
