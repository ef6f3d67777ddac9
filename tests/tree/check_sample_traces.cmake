# cmake -DSOURCE_DIR=<repository> -P check_sample_traces.cmake (tests/tree/CMakeLists.txt): every tracked
# samples/traces/**/*.sqlite is at most 1 MiB, except the demo's default trace, which scripts/demo.sh reads as it is;
# and every tracked samples/traces/**/*.sqlite.xz has its unpacked .sqlite gitignored (CMake writes it beside the
# archive). Prints "tree check skipped: ..." (the test's skip pattern) where git cannot say what is tracked.
set(limit_bytes 1048576)
set(exempt "samples/traces/h100-train-fp8.sqlite")

find_program(GIT git)
if(NOT GIT)
    message(NOTICE "tree check skipped: no git")
    return()
endif()
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel RESULT_VARIABLE rc
    OUTPUT_VARIABLE toplevel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
file(REAL_PATH "${SOURCE_DIR}" source_real)
if(NOT rc EQUAL 0 OR NOT toplevel STREQUAL source_real)
    message(NOTICE "tree check skipped: ${SOURCE_DIR} is not a git checkout")
    return()
endif()

# "*" in a git pathspec matches across "/": these list the whole of samples/traces/.
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" -c core.quotePath=false ls-files --
        "samples/traces/*.sqlite" "samples/traces/*.sqlite.xz"
    RESULT_VARIABLE rc OUTPUT_VARIABLE tracked ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ls-files failed: ${err}")
endif()
string(REPLACE "\n" ";" tracked "${tracked}")

set(problems "")
set(checked 0)
foreach(path IN LISTS tracked)
    if(path STREQUAL "")
        continue()
    endif()
    math(EXPR checked "${checked} + 1")
    if(path MATCHES "\\.sqlite$")
        if(path STREQUAL exempt)
            continue()
        endif()
        if(EXISTS "${SOURCE_DIR}/${path}")
            file(SIZE "${SOURCE_DIR}/${path}" bytes)
        else() # deleted in the work tree, still in the index: the index's size
            execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" cat-file -s ":${path}" OUTPUT_VARIABLE bytes
                OUTPUT_STRIP_TRAILING_WHITESPACE)
        endif()
        if(bytes GREATER limit_bytes)
            string(CONCAT problem "${path}: tracked plain, ${bytes} bytes (over 1 MiB): store it as ${path}.xz, "
                                  "git rm --cached it and gitignore it (samples/traces/README.md)")
            list(APPEND problems "${problem}")
        endif()
    else()
        string(REGEX REPLACE "\\.xz$" "" unpacked "${path}")
        # Exit 0 only for an ignored path that is not tracked (check-ignore reports no tracked file as ignored).
        execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" check-ignore -q "${unpacked}" RESULT_VARIABLE ignored)
        if(NOT ignored EQUAL 0)
            string(CONCAT problem "${path}: its unpacked ${unpacked} is tracked or not gitignored (add it to "
                                  ".gitignore, samples/traces/README.md)")
            list(APPEND problems "${problem}")
        endif()
    endif()
endforeach()

if(problems)
    foreach(problem IN LISTS problems)
        message(NOTICE "${problem}") # NOTICE: unwrapped, one line each
    endforeach()
    list(LENGTH problems count)
    message(FATAL_ERROR " ${count} problem(s) with the tracked sample traces, listed above")
endif()
message(STATUS "${checked} tracked files in samples/traces checked: no plain trace over 1 MiB but the demo's, "
               "every archive's unpacked file gitignored")
