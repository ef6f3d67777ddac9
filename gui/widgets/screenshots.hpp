// The screenshots in docs/gui/: every view of a loaded window grabbed into PNGs (fp8scope-gui --screenshots DIR,
// run under Xvfb by scripts/gui-screenshots.sh).
#pragma once

#include <QString>

namespace fp8scope::gui {

class MainWindow;

// Saves DIR/<view>.png for every view; returns how many could not be written.
int save_screenshots(MainWindow& window, const QString& dir);

} // namespace fp8scope::gui
