// fp8scope-gui TRACE [--ref REF]: the Qt viewer. Everything but argument handling lives in the two static
// libraries (gui/CMakeLists.txt), so that tests can drive the same window.
#include "widgets/main_window.hpp"
#include "widgets/screenshots.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>

using namespace Qt::StringLiterals;

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(u"fp8scope-gui"_s);
    QApplication::setApplicationVersion(QStringLiteral(FP8SCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(u"The fp8scope viewer: where the GPU idles and why, what FP8 costs, and which "
                                     "tensor drifts against a reference run (docs/gui.md)."_s);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(u"TRACE"_s, u"An fp8scope trace or an Nsight Systems SQLite export"_s, u"[TRACE]"_s);
    const QCommandLineOption ref_option(
        u"ref"_s, u"A reference run of the same job (e.g. BF16) to compare with"_s, u"REF"_s);
    const QCommandLineOption screenshots_option(u"screenshots"_s,
        u"Save a PNG of every view into DIR once TRACE is loaded, then quit (for docs/gui/)"_s, u"DIR"_s);
    parser.addOption(ref_option);
    parser.addOption(screenshots_option);
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        std::fprintf(stderr, "fp8scope-gui: one TRACE at most (use --ref REF for a reference)\n");
        return 2;
    }
    if (positional.isEmpty() && (parser.isSet(ref_option) || parser.isSet(screenshots_option))) {
        std::fprintf(stderr, "fp8scope-gui: --ref and --screenshots need a TRACE\n");
        return 2;
    }

    fp8scope::gui::MainWindow window;
    window.show();
    if (!positional.isEmpty())
        window.open(positional.front(), parser.value(ref_option));
    if (parser.isSet(screenshots_option)) {
        const QString dir = parser.value(screenshots_option);
        // After the whole job, so that the timeline is built too.
        QObject::connect(&window, &fp8scope::gui::MainWindow::job_finished, &app, [&window, dir] {
            if (!window.session() || !window.banner_text().isEmpty()) {
                std::fprintf(stderr, "fp8scope-gui: %s\n", qPrintable(window.banner_text()));
                QApplication::exit(3);
                return;
            }
            const int failures = fp8scope::gui::save_screenshots(window, dir);
            QApplication::exit(failures == 0 ? 0 : 1);
        });
    }
    return QApplication::exec();
}
