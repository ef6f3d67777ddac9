# Warning flags and optional sanitizers, applied per target so that injected code can opt out of sanitizers.
add_library(fp8scope_warnings INTERFACE)
target_compile_options(fp8scope_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

add_library(fp8scope_sanitizers INTERFACE)
if(FP8SCOPE_SANITIZE)
    target_compile_options(fp8scope_sanitizers INTERFACE
        $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
    target_link_options(fp8scope_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

# Everything that is not injected into a training job links this one.
add_library(fp8scope_defaults INTERFACE)
target_link_libraries(fp8scope_defaults INTERFACE fp8scope_warnings fp8scope_sanitizers)
