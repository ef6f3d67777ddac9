# cmake -DSOURCE_DIR=<repository> -P check_test_names.cmake (tests/tree/CMakeLists.txt): no Catch2 test name holds a
# ';'. catch_discover_tests makes one CTest per name, and CMake reads a ';' as a list separator: the test then gets a
# cut name, Catch matches no test case with it, runs nothing, and CTest counts that as passed (37 test cases did so
# until 2026-11-29, one of them with stale figures). Fails with one line per name.
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE sources "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/fuzz/*.cpp")
set(problems "")
set(names 0)
foreach(source IN LISTS sources)
    file(READ "${source}" text)
    # The name is the first argument: one string literal, or two adjacent ones split over lines.
    string(REGEX MATCHALL "(TEST_CASE|SCENARIO)\\([ \t\r\n]*\"[^\"]*\"([ \t\r\n]*\"[^\"]*\")?" found "${text}")
    foreach(name IN LISTS found)
        math(EXPR names "${names} + 1")
    endforeach()
    # A ';' inside the match splits it into list items above, so look for it in the text itself.
    string(REGEX MATCHALL "(TEST_CASE|SCENARIO)\\([ \t\r\n]*\"[^\"]*;[^\"]*\"" bad "${text}")
    string(REGEX MATCHALL "(TEST_CASE|SCENARIO)\\([ \t\r\n]*\"[^\"]*\"[ \t\r\n]*\"[^\"]*;[^\"]*\"" bad2 "${text}")
    if(bad OR bad2)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${source}")
        set(problems "${problems}\n  ${rel}: a test name holds ';' (use ',' or ':')")
    endif()
endforeach()
if(names EQUAL 0)
    message(FATAL_ERROR "check_test_names: no test case found under ${SOURCE_DIR}/tests (the check checks nothing)")
endif()
if(problems)
    message(FATAL_ERROR "check_test_names: CTest would run nothing for these:${problems}")
endif()
message(STATUS "check_test_names: ${names} test names, none with ';'")
