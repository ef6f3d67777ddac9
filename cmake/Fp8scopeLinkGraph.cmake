# The libraries' direct links, written at generate time for the CTest test tree_link_rules
# (tests/tree/check_link_rules.cmake), which checks them against docs/architecture.md's library table. Included last
# by the top-level CMakeLists.txt, when every target exists: one line per fp8scope library that this build has,
# "<target>=<its LINK_LIBRARIES, ';'-separated>".
set(fp8scope_link_graph_targets fp8scope_common fp8scope_schema fp8scope_writer fp8scope_collector_core
    fp8scope_collector fp8scope_probes fp8scope_analyzer fp8scope_present fp8scope_calibrate fp8scope_cli_render
    fp8scope fp8scope_gui_models fp8scope_gui_widgets)
set(fp8scope_link_graph "")
foreach(target IN LISTS fp8scope_link_graph_targets)
    if(TARGET ${target})
        string(APPEND fp8scope_link_graph "${target}=$<TARGET_PROPERTY:${target},LINK_LIBRARIES>\n")
    endif()
endforeach()
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/link_graph.txt CONTENT "${fp8scope_link_graph}")
