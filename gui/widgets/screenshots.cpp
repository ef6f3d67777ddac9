#include "widgets/screenshots.hpp"

#include "widgets/main_window.hpp"

#include <QApplication>
#include <QDir>
#include <QPixmap>
#include <QTabWidget>

#include <cstdio>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

int save_screenshots(MainWindow& window, const QString& dir)
{
    QDir().mkpath(dir);
    int failures = 0;
    const auto save = [&](const QString& name) {
        // Layout requests cascade (a chart's new minimum size, then its scroll area's): settle them all first.
        for (int i = 0; i < 20; ++i) {
            QCoreApplication::sendPostedEvents();
            QApplication::processEvents();
        }
        const QString path = QDir(dir).filePath(name + u".png"_s);
        if (!window.grab().save(path)) {
            std::fprintf(stderr, "fp8scope-gui: cannot write %s\n", qPrintable(path));
            ++failures;
        }
    };
    QTabWidget& tabs = window.tabs();
    for (int i = 0; i < tabs.count(); ++i) {
        tabs.setCurrentIndex(i);
        save(tabs.tabText(i).toLower().remove(u'&'));
    }
    tabs.setCurrentIndex(0);
    return failures;
}

} // namespace fp8scope::gui
