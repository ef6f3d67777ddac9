# FP8SCOPE_BUILD_FUZZERS: every target is compiled with libFuzzer's coverage instrumentation (fuzzer-no-link), ASan
# and UBSan; the fuzz targets in fuzz/ add libFuzzer's main (-fsanitize=fuzzer). A fuzz build is a build directory of
# its own (docs/reliability.md). The sanitizer runtimes and libstdc++ are linked statically so that the fuzz binaries
# run on another x86-64 Debian or Ubuntu machine with nothing installed.
if(NOT FP8SCOPE_BUILD_FUZZERS)
    return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 19)
    # clang 14 to 18 cannot compile libstdc++ 12's <expected>, which every fp8scope module uses (clang defines
    # __cpp_concepts as 202002 from 19 on; libstdc++ hides std::expected below it).
    message(FATAL_ERROR "FP8SCOPE_BUILD_FUZZERS needs clang 19 or later (Debian: clang-19 libclang-rt-19-dev); "
                        "configure with -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined -static-libstdc++ -static-libgcc)
