// An item delegate that elides one column's text its own way: a site label or kernel name keeps its informative
// end or both ends (Qt::ElideMiddle, Qt::ElideLeft) while sentences in the other columns keep their start.
#pragma once

#include <QStyledItemDelegate>

namespace fp8scope::gui {

class ElidingDelegate : public QStyledItemDelegate {
public:
    ElidingDelegate(Qt::TextElideMode mode, QObject* parent)
        : QStyledItemDelegate(parent)
        , mode_(mode)
    {
    }

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = mode_;
    }

private:
    Qt::TextElideMode mode_;
};

} // namespace fp8scope::gui
