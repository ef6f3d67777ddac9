#include "widgets/message_banner.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

MessageBanner::MessageBanner(QWidget* parent)
    : QFrame(parent)
    , label_(new QLabel(this))
{
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    label_->setWordWrap(true);
    label_->setTextFormat(Qt::PlainText); // messages quote file names and trace text
    label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(this);
    close->setText(u"×"_s);
    close->setAutoRaise(true);
    close->setToolTip(u"Close this message"_s);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    layout->addWidget(label_, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    hide();
}

void MessageBanner::show_message(Kind kind, const QString& text)
{
    QPalette p = palette();
    // Light tints of the dashboard's red and orange, dark enough text for contrast on either.
    p.setColor(QPalette::Window, kind == Kind::Error ? QColor(0xfd, 0xe2, 0xe2) : QColor(0xff, 0xf1, 0xd6));
    p.setColor(QPalette::WindowText, QColor(0x3a, 0x1a, 0x1a));
    setPalette(p);
    label_->setText(text);
    show();
}

QString MessageBanner::text() const
{
    return isHidden() ? QString() : label_->text();
}

} // namespace fp8scope::gui
