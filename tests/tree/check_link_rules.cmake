# docs/architecture.md's library table, checked on the build's link graph (cmake/Fp8scopeLinkGraph.cmake writes each
# library's direct links): a library may not link, directly or through another fp8scope library, what its row
# forbids. Fails with one line per broken rule; a graph without the analyzer or the CLI checks nothing and fails.
# Run as: cmake -DGRAPH=<build>/link_graph.txt -P check_link_rules.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT EXISTS "${GRAPH}")
    message(FATAL_ERROR "tree_link_rules: no link graph at ${GRAPH} (configure and generate the build first)")
endif()
file(STRINGS "${GRAPH}" lines)
set(targets "")
foreach(line IN LISTS lines)
    string(FIND "${line}" "=" eq)
    string(SUBSTRING "${line}" 0 ${eq} target)
    math(EXPR rest "${eq} + 1")
    string(SUBSTRING "${line}" ${rest} -1 links)
    # Generator expressions the graph kept as text ($<LINK_ONLY:x>) name x. The flag targets (fp8scope_defaults:
    # standard, sanitizers; fp8scope_warnings) link no code, and "::@(...)" marks a link added from another
    # directory: neither is a library.
    string(REGEX REPLACE "\\$<LINK_ONLY:([^>]*)>" "\\1" links "${links}")
    list(FILTER links EXCLUDE REGEX "^(fp8scope_defaults|fp8scope_warnings|::@.*)$")
    set(direct_${target} "${links}")
    list(APPEND targets ${target})
endforeach()
foreach(required fp8scope_analyzer fp8scope_cli_render)
    if(NOT required IN_LIST targets)
        message(FATAL_ERROR "tree_link_rules: ${required} is not in the link graph: the rules would check nothing")
    endif()
endforeach()

# Everything a target links, through the fp8scope libraries it links.
function(closure target out)
    set(seen "")
    set(queue ${direct_${target}})
    while(queue)
        list(POP_FRONT queue item)
        if(item IN_LIST seen)
            continue()
        endif()
        list(APPEND seen ${item})
        if(DEFINED direct_${item})
            list(APPEND queue ${direct_${item}})
        endif()
    endwhile()
    set(${out} "${seen}" PARENT_SCOPE)
endfunction()

# rule: <targets, ','-separated>|<regex of a forbidden link>|<the table's reason>
set(rules
    "fp8scope_common,fp8scope_fmt|^fp8scope_|common links nothing of fp8scope"
    "fp8scope_schema,fp8scope_writer|^(fp8scope_analyzer|CUDA::|Qt6::)|the format links neither the analyzer, CUDA nor Qt"
    "fp8scope_collector_core,fp8scope_collector|^(fp8scope_analyzer|fp8scope_present|Qt6::)|the collector records: no analyzer, no wording, no Qt"
    "fp8scope_analyzer|^(fp8scope_writer|fp8scope_present|fp8scope_calibrate|fp8scope_cli_render|fp8scope_collector|CUDA::|Qt6::)|the analyzer only reads: no writer, CUDA, Qt, wording, CLI or GEMM timer"
    "fp8scope_present|^(fp8scope_cli_render|fp8scope_calibrate|Qt6::|CUDA::)|present/ words: no CLI, no Qt"
    "fp8scope_calibrate|^(fp8scope_analyzer|fp8scope_schema|fp8scope_writer|CUDA::)|the GEMM timer links common alone and opens CUDA with dlopen"
    "fp8scope_cli_render,fp8scope|^(fp8scope_collector|Qt6::|CUDA::)|the CLI links no collector, Qt or CUDA library"
    "fp8scope_gui_models,fp8scope_gui_widgets|^(fp8scope_cli_render|fp8scope_calibrate|CUDA::)|the viewer links no CLI and never measures")

set(problems "")
set(checked 0)
foreach(rule IN LISTS rules)
    string(REPLACE "|" ";" parts "${rule}")
    list(GET parts 0 rule_targets)
    list(POP_BACK parts why)
    list(POP_FRONT parts)
    list(JOIN parts "|" forbidden)
    string(REPLACE "," ";" rule_targets "${rule_targets}")
    foreach(target IN LISTS rule_targets)
        if(NOT target IN_LIST targets)
            continue() # not in this build (the collector without CUDA, the viewer without Qt)
        endif()
        math(EXPR checked "${checked} + 1")
        closure(${target} links)
        foreach(link IN LISTS links)
            if(link MATCHES "${forbidden}")
                set(problems "${problems}\n  ${target} links ${link}: ${why}")
            endif()
        endforeach()
    endforeach()
endforeach()
if(problems)
    message(FATAL_ERROR "tree_link_rules: the library table of docs/architecture.md is broken:${problems}")
endif()
message(STATUS "tree_link_rules: ${checked} libraries checked against their rules")
