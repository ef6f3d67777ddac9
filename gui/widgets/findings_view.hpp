// The findings list: every drift finding and recommendation of the session (FindingsModel), sortable, with the
// selected finding's full text below. Selecting a finding asks the window to go to the place it points at.
#pragma once

#include "models/findings_model.hpp"

#include <QWidget>

class QLabel;
class QSortFilterProxyModel;
class QTreeView;

namespace fp8scope::gui {

class FindingsView : public QWidget {
    Q_OBJECT
public:
    FindingsView(FindingsModel& model, QWidget* parent = nullptr);

    QTreeView& tree() { return *tree_; }

Q_SIGNALS:
    // A finding became the current one (its place is shown in the shared view state).
    void finding_selected(const fp8scope::gui::FindingTarget& target);
    // A finding was double-clicked or Enter pressed: bring its view to the front.
    void finding_activated(const fp8scope::gui::FindingTarget& target);

private:
    void show_details(const QModelIndex& proxy_index);

    FindingsModel& model_;
    QSortFilterProxyModel* proxy_;
    QTreeView* tree_;
    QLabel* details_;
};

} // namespace fp8scope::gui
