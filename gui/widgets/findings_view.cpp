#include "widgets/findings_view.hpp"

#include "widgets/eliding_delegate.hpp"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

FindingsView::FindingsView(FindingsModel& model, QWidget* parent)
    : QWidget(parent)
    , model_(model)
    , proxy_(new QSortFilterProxyModel(this))
    , tree_(new QTreeView(this))
    , details_(new QLabel(this))
{
    proxy_->setSourceModel(&model_);
    tree_->setModel(proxy_);
    tree_->setRootIsDecorated(false);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->setSortingEnabled(true);
    tree_->sortByColumn(-1, Qt::AscendingOrder); // the model's order: drift first, then by saving
    tree_->header()->setStretchLastSection(true);
    // A site label's both ends (NVTX path, operand) matter most; the sentences keep their start.
    tree_->setItemDelegateForColumn(FindingsModel::Finding, new ElidingDelegate(Qt::ElideMiddle, tree_));
    proxy_->setSortRole(FindingsModel::kSortRole);

    details_->setWordWrap(true);
    details_->setTextFormat(Qt::PlainText);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    details_->setMargin(8);
    details_->setText(u"Select a finding to see its evidence here and move the timeline to its step; double-click it "
                      "(or press Enter) to show the timeline, or the tensor view for a drifting site."_s);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(tree_);
    splitter->addWidget(details_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);

    connect(tree_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { show_details(current); });
    connect(tree_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        Q_EMIT finding_activated(model_.target(proxy_->mapToSource(index).row()));
    });
    // Kind, saving and place are short and read whole; the finding gets its width up to about 80 characters (a site
    // label is longer, and elides in the middle), and Why the rest. Every cell's tooltip holds the finding's full
    // text, and so does the panel below.
    connect(&model_, &QAbstractItemModel::modelReset, this, [this] {
        QHeaderView& header = *tree_->header();
        for (const int column : { FindingsModel::Kind, FindingsModel::Saving, FindingsModel::Where })
            header.setSectionResizeMode(column, QHeaderView::ResizeToContents);
        header.setSectionResizeMode(FindingsModel::Finding, QHeaderView::Interactive);
        header.setSectionResizeMode(FindingsModel::Why, QHeaderView::Stretch);
        tree_->resizeColumnToContents(FindingsModel::Finding);
        const int max_finding_px = 80 * tree_->fontMetrics().averageCharWidth();
        header.resizeSection(
            FindingsModel::Finding, std::min(header.sectionSize(FindingsModel::Finding), max_finding_px));
    });
}

void FindingsView::show_details(const QModelIndex& proxy_index)
{
    if (!proxy_index.isValid())
        return;
    const QModelIndex source = proxy_->mapToSource(proxy_index);
    details_->setText(model_.data(source.siblingAtColumn(FindingsModel::Finding), Qt::ToolTipRole).toString());
    Q_EMIT finding_selected(model_.target(source.row()));
}

} // namespace fp8scope::gui
