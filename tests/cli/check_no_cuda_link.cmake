# `fp8scope` links no CUDA library (docs/architecture.md "Dependency rules": calibrate opens the driver and cuBLASLt
# with dlopen), so it runs where there is no GPU. Reads the binary's dynamic section with readelf; fails when it
# needs libcuda, libcudart, libcublas or libcublasLt, and also when readelf fails or lists no library at all (the
# check would then have read nothing).
# Run as: cmake -DBINARY=<fp8scope> -P check_no_cuda_link.cmake
cmake_minimum_required(VERSION 3.25)
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} -d ${BINARY} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${BINARY} failed (${rc})")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
if(NOT needed MATCHES "libc\\.so")
    message(FATAL_ERROR "no NEEDED libc.so in ${BINARY}: the dynamic section was not read")
endif()
if(needed MATCHES "libcuda|libcudart|libcublas")
    message(FATAL_ERROR "${BINARY} links a CUDA library: ${needed}")
endif()
list(LENGTH needed count)
message(STATUS "${count} libraries needed, none of them CUDA's")
