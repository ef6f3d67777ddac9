# Included by the tree checks (cmake -P): finds git and checks that SOURCE_DIR is the top of a git checkout. Sets GIT
# and tree_git_ok; where it is false it has printed "tree check skipped: ..." (the tests' skip pattern), and the
# including script returns: without git nothing can say what is tracked, and the check must not pass for it.
set(tree_git_ok FALSE)
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
set(tree_git_ok TRUE)
