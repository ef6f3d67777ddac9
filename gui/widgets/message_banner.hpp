// A message across the top of the window (KDE's KMessageWidget idea): a problem or a warning stays readable and can
// be closed, and the window behind it stays usable, unlike a modal dialog that blocks every view.
#pragma once

#include <QFrame>

class QLabel;

namespace fp8scope::gui {

class MessageBanner : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Error, Warning };
    explicit MessageBanner(QWidget* parent = nullptr);
    void show_message(Kind kind, const QString& text);
    QString text() const;

private:
    QLabel* label_;
};

} // namespace fp8scope::gui
