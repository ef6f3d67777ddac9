// Catch2's main for the viewer tests: one QApplication for every test (widgets, item models and the loader's
// queued signals need one). The offscreen platform is the default here as well as in CTest's environment, so that
// Catch's test discovery at build time, which runs this binary outside CTest, never needs a display. The analyzer's
// data files come from the build tree (build_data_dir.hpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "build_data_dir.hpp"

#include <QApplication>

int main(int argc, char** argv)
{
    fp8scope::testing::use_build_data_dir();
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    return Catch::Session().run(argc, argv);
}
