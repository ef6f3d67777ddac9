// The analyzer reads its shipped GEMM tables from $FP8SCOPE_DATA_DIR, else from share/fp8scope above the program's
// folder (fp8_whatif.hpp), which <build>/bin/fp8scope has and a test program in <build>/tests/<area>/ does not. Each
// test main calls this first, so that a test runs the same under CTest, by hand, or as Catch's test discovery.
#pragma once

#include <cstdlib>

namespace fp8scope::testing {

// FP8SCOPE_DATA_DIR set to the build tree's share/fp8scope, unless set already (a run against an install's files).
inline void use_build_data_dir()
{
    setenv("FP8SCOPE_DATA_DIR", FP8SCOPE_BUILD_DATA_DIR, 0);
}

} // namespace fp8scope::testing
