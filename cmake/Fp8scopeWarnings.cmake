# Warning flags and optional sanitizers, applied per target so that injected code can opt out of sanitizers.
add_library(fp8scope_warnings INTERFACE)
target_compile_options(fp8scope_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

add_library(fp8scope_sanitizers INTERFACE)
if(FP8SCOPE_SANITIZE)
    # -Wno-maybe-uninitialized: with the sanitizers' instrumentation g++ 12 reports std::regex's and std::function's
    # moves in libstdc++ as maybe uninitialized (14 warnings from steps.cpp's <regex> alone); GCC's manual says this
    # warning gives false positives under optimisation and instrumentation. The build/test configuration, without
    # sanitizers, keeps it.
    target_compile_options(fp8scope_sanitizers INTERFACE
        $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
        $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>>)
    target_link_options(fp8scope_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

# Everything that is not injected into a training job links this one.
add_library(fp8scope_defaults INTERFACE)
target_link_libraries(fp8scope_defaults INTERFACE fp8scope_warnings fp8scope_sanitizers)
