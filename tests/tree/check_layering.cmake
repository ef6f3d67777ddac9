# The dependency rules of docs/architecture.md "Dependency rules", checked on every source's #include lines:
#   the analyzer only reads: no writer, no CUDA or CUPTI, no Qt, no presentation or CLI header;
#   the presentation library words and computes nothing of its own: no CLI header, no Qt;
#   the viewer never includes the CLI (its wording comes from present/);
#   the collector never includes the analyzer;
#   common/ includes no other part of fp8scope;
#   the GEMM timer (calibrate/) includes only common/, and neither the analyzer nor the viewer includes it;
#   inside the analyzer and inside the collector, a folder includes only the folders below it in its layer order.
# Run as: cmake -DSOURCE_DIR=<repo> -P check_layering.cmake. Fails with one line per broken rule, naming the file and
# the include.
cmake_minimum_required(VERSION 3.25)

# The CLI's folders, as the CLI includes them ("report/report_render.hpp"): none may be included outside cli/. The
# analyzer has private compare/ and report/ folders of its own, so its rule leaves those names out.
set(cli_folders "commands|inputs|record|report|compare|trace_info|export|rank_json|output|calibrate")
set(cli_folders_not_analyzer "commands|inputs|record|trace_info|export|rank_json|output|calibrate")

# The targets of a source's #include lines (<...> and "...") that match PATTERN, into OUT.
function(included_matching source pattern out)
    file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    set(found "")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*" "\\1" target "${line}")
        if(target MATCHES "${pattern}")
            list(APPEND found "${target}")
        endif()
    endforeach()
    set(${out} "${found}" PARENT_SCOPE)
endfunction()

# rule: <folder> <regex of a forbidden include target> <why>
set(rules
    "analyzer|fp8scope/format/(trace_db|background_writer)\\.hpp|the analyzer only reads: no writer"
    "analyzer|^(cuda|cupti|nvtx|cublas)|the analyzer has no CUDA"
    "analyzer|^fp8scope/calibrate/|the analyzer decides and never measures"
    "analyzer|^Q|the analyzer has no Qt"
    "analyzer|^fp8scope/present/|the analyzer computes, present/ words: no wording in the analyzer"
    "analyzer|^(${cli_folders_not_analyzer})/|the analyzer never includes the CLI"
    "present|^(${cli_folders})/|present/ never includes the CLI"
    "present|^Q|present/ has no Qt"
    "gui|^(${cli_folders})/|the viewer never includes the CLI: its wording is present/'s"
    "collector|^fp8scope/analyzer/|the collector records and never includes the analyzer"
    "collector|^fp8scope/present/|the collector never includes the presentation library"
    "common|^fp8scope/(format|analyzer|present|calibrate)/|common/ depends on nothing"
    "calibrate|^fp8scope/(format|analyzer|present)/|the GEMM timer measures: it depends on common/ alone"
    "gui|^fp8scope/calibrate/|the viewer never measures")

set(problems "")
set(checked 0)
foreach(rule IN LISTS rules)
    string(REPLACE "|" ";" parts "${rule}")
    # The folder is the first part and the reason the last; the regex may itself hold '|'.
    list(GET parts 0 folder)
    list(POP_BACK parts why)
    list(POP_FRONT parts)
    list(JOIN parts "|" forbidden)
    file(GLOB_RECURSE sources "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.h"
        "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
    if(NOT sources)
        set(problems "${problems}\n  ${folder}/: no source found (the rule checks nothing)")
        continue()
    endif()
    foreach(source IN LISTS sources)
        math(EXPR checked "${checked} + 1")
        included_matching("${source}" "${forbidden}" targets)
        foreach(target IN LISTS targets)
            file(RELATIVE_PATH rel "${SOURCE_DIR}" "${source}")
            set(problems "${problems}\n  ${rel}: #include \"${target}\": ${why}")
        endforeach()
    endforeach()
endforeach()
# Folders in layers: each folder of a component includes only itself and the folders before it in its order, and
# every folder is in the order. `public` is the component's public header folder (or empty): its includes
# ("fp8scope/analyzer/<folder>/") count as the folder's; `section` names the part of docs/architecture.md that says it.
function(check_layers component src public section)
    set(layers ${ARGN})
    file(GLOB folders LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}/${src}" "${SOURCE_DIR}/${src}/*")
    foreach(folder IN LISTS folders)
        if(IS_DIRECTORY "${SOURCE_DIR}/${src}/${folder}" AND NOT folder IN_LIST layers)
            string(APPEND problems "\n  ${src}/${folder}/: not in the ${component}'s layer order (check_layering.cmake)")
        endif()
    endforeach()
    list(LENGTH layers layer_count)
    math(EXPR last_layer "${layer_count} - 1")
    foreach(index RANGE 0 ${last_layer})
        list(GET layers ${index} folder)
        math(EXPR above "${index} + 1")
        if(above GREATER last_layer)
            break()
        endif()
        list(SUBLIST layers ${above} -1 higher)
        list(JOIN higher "|" higher)
        set(globs "${SOURCE_DIR}/${src}/${folder}/*.cpp" "${SOURCE_DIR}/${src}/${folder}/*.hpp")
        if(public)
            list(APPEND globs "${SOURCE_DIR}/${public}/${folder}/*.hpp")
        endif()
        file(GLOB_RECURSE sources ${globs})
        foreach(source IN LISTS sources)
            math(EXPR checked "${checked} + 1")
            included_matching("${source}" "^(fp8scope/${component}/)?(${higher})/" targets)
            foreach(target IN LISTS targets)
                if(target MATCHES "^(fp8scope/${component}/)?(${higher})/")
                    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${source}")
                    string(APPEND problems "\n  ${rel}: #include \"${target}\": the ${component}'s ${folder}/ sits below "
                        "${CMAKE_MATCH_2}/ (docs/architecture.md \"${section}\")")
                endif()
            endforeach()
        endforeach()
    endforeach()
    set(problems "${problems}" PARENT_SCOPE)
    set(checked "${checked}" PARENT_SCOPE)
endfunction()

# Inside the analyzer (docs/architecture.md "Inside the analyzer"): each folder includes, publicly
# ("fp8scope/analyzer/<folder>/") or privately ("<folder>/"), only itself and the folders before it in this order.
check_layers(analyzer analyzer/src analyzer/include/fp8scope/analyzer "Inside the analyzer"
    model load calls kernels steps idle tensors numerics report advice compare ranks views whatif)
# Inside the collector (docs/architecture.md "Inside the collector"): the records made from CUPTI's callbacks, CUPTI,
# the capture windows and steps, the session and its one object, the tensor statistics, the entry points.
check_layers(collector collector/src "" "Inside the collector" calls cupti capture session stats entry)

if(problems)
    message(FATAL_ERROR "layering rules broken (docs/architecture.md \"Dependency rules\"):${problems}")
endif()
list(LENGTH rules rule_count)
message(STATUS "${rule_count} layering rules hold over ${checked} source checks")
