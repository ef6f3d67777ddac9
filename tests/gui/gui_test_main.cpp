// Catch2's main for the viewer tests: one QApplication for every test (widgets, item models and the loader's
// queued signals need one). The offscreen platform is the default here as well as in CTest's environment, so that
// Catch's test discovery at build time, which runs this binary outside CTest, never needs a display.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    return Catch::Session().run(argc, argv);
}
