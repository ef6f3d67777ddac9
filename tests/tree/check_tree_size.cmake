# cmake -DSOURCE_DIR=<repository> [-DLIMIT_MIB=27] -P check_tree_size.cmake (tests/tree/CMakeLists.txt): the files
# git tracks add up to at most LIMIT_MIB MiB. The size is that of the index's blobs (what a commit of the index would
# hold and a clone checks out), not the work tree's, so an edit not yet staged neither hides nor adds anything; on
# failure the largest tracked files are listed. Prints "tree check skipped: ..." (the test's skip pattern) where git
# cannot say what is tracked.
if(NOT DEFINED LIMIT_MIB)
    set(LIMIT_MIB 27)
endif()
include("${CMAKE_CURRENT_LIST_DIR}/tree_git.cmake")
if(NOT tree_git_ok)
    return()
endif()

# "mode object stage<TAB>path" per index entry; a gitlink (mode 160000, a submodule) has no blob here.
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" -c core.quotePath=false ls-files --stage
    RESULT_VARIABLE rc OUTPUT_VARIABLE entries ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ls-files --stage failed: ${err}")
endif()
string(REGEX REPLACE "(^|\n)160000 [^\n]*" "" entries "${entries}")
string(REGEX REPLACE "[0-7]+ ([0-9a-f]+) [0-3]\t" "\\1 " objects "${entries}") # "object path" per line
string(RANDOM LENGTH 8 tag)
set(objects_file "${CMAKE_CURRENT_BINARY_DIR}/tree-size-objects-${tag}.txt")
file(WRITE "${objects_file}" "${objects}")
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" cat-file "--batch-check=%(objectsize) %(rest)"
    INPUT_FILE "${objects_file}" RESULT_VARIABLE rc OUTPUT_VARIABLE sizes ERROR_VARIABLE err)
file(REMOVE "${objects_file}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git cat-file --batch-check failed: ${err}")
endif()
string(REPLACE "\n" ";" sizes "${sizes}")

set(total_bytes 0)
set(files 0)
set(by_size "")
foreach(line IN LISTS sizes)
    if(NOT line MATCHES "^([0-9]+) (.*)$")
        continue()
    endif()
    math(EXPR total_bytes "${total_bytes} + ${CMAKE_MATCH_1}")
    math(EXPR files "${files} + 1")
    string(LENGTH "${CMAKE_MATCH_1}" digits)
    math(EXPR pad "12 - ${digits}")
    string(REPEAT "0" ${pad} zeros)
    list(APPEND by_size "${zeros}${line}") # zero-padded, so that a string sort is a numeric one
endforeach()
if(files EQUAL 0)
    message(FATAL_ERROR "git lists no tracked file in ${SOURCE_DIR}")
endif()

# MiB with two decimals (math() has integers only).
math(EXPR centi_mib "(${total_bytes} * 100 + 524288) / 1048576")
math(EXPR whole "${centi_mib} / 100")
math(EXPR frac "${centi_mib} % 100")
if(frac LESS 10)
    set(frac "0${frac}")
endif()
math(EXPR limit_bytes "${LIMIT_MIB} * 1048576")
if(total_bytes GREATER limit_bytes)
    list(SORT by_size ORDER DESCENDING)
    list(SUBLIST by_size 0 10 largest)
    message(NOTICE "the largest tracked files (bytes):")
    foreach(line IN LISTS largest)
        string(REGEX REPLACE "^0+" "" line "${line}")
        message(NOTICE "  ${line}")
    endforeach()
    message(FATAL_ERROR " the tracked tree is ${whole}.${frac} MiB (${total_bytes} bytes in ${files} files), over "
                        "its limit of ${LIMIT_MIB} MiB: compress or shrink what grew (a sample trace goes in as "
                        "<name>.sqlite.pack, samples/traces/README.md)")
endif()
message(STATUS "the tracked tree is ${whole}.${frac} MiB (${total_bytes} bytes in ${files} files), within its "
               "limit of ${LIMIT_MIB} MiB")
