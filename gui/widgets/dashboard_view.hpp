// The dashboard: the session at a glance. A headline (step time, bubble ratio, top cause), the compare verdict
// when a reference is open, the top findings with their estimated savings (click one to go to it), charts of the
// bubble ratio and of the idle time by cause per step, the kernel time per step by class (the FP8 overhead), and
// the tensor health summary; for a BF16 run, after the findings, the FP8 what-if (fp8_whatif_panel.hpp). Every figure
// is the analyzer's; the wording is the presentation library's (present/).
#pragma once

#include "models/findings_model.hpp"
#include "models/trace_session.hpp"

#include <QScrollArea>

#include <array>
#include <memory>

class QHBoxLayout;
class QLabel;
class QSortFilterProxyModel;
class QTableWidget;
class QTreeView;
class QVBoxLayout;

namespace fp8scope::gui {

class Fp8WhatIfPanel;

class DashboardView : public QScrollArea {
    Q_OBJECT
public:
    DashboardView(FindingsModel& findings, QWidget* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);

Q_SIGNALS:
    void finding_activated(const fp8scope::gui::FindingTarget& target);

private:
    void rebuild_charts();

    FindingsModel& findings_model_;
    std::shared_ptr<const Session> session_;
    QLabel* headline_;
    QWidget* compare_box_;
    QLabel* verdict_;
    QLabel* compare_details_;
    QTableWidget* performance_;
    std::array<QHBoxLayout*, 2> charts_rows_ {};
    std::array<QWidget*, 3> charts_views_ {};
    QSortFilterProxyModel* top_findings_;
    QTreeView* findings_;
    QLabel* tensor_health_;
    Fp8WhatIfPanel* fp8_whatif_;
};

} // namespace fp8scope::gui
