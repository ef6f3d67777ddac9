// Catch2's main for the tests, with the analyzer's data files taken from the build tree (build_data_dir.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "build_data_dir.hpp"

int main(int argc, char** argv)
{
    fp8scope::testing::use_build_data_dir();
    return Catch::Session().run(argc, argv);
}
