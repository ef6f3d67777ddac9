// The Tensors tab: the site table (TensorSitesModel; drifting sites in the warning colour, the first divergent in
// bold) and, for the selected site, its figures over the analysed steps (the analyzer's tensor_series()): amax of
// the run and of the reference (compare's per-step figures) on a log scale, saturation and underflow in percent,
// and headroom in bits, with the drift's onset marked on each plot.
#pragma once

#include "models/tensor_sites_model.hpp"
#include "models/view_state.hpp"

#include <QWidget>

#include <array>

class QChartView;
class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace fp8scope::gui {

class TensorsView : public QWidget {
    Q_OBJECT
public:
    TensorsView(TensorSitesModel& model, ViewState& state, QWidget* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);
    QTreeView& table() { return *table_; }
    // The three plots: amax, saturation/underflow, headroom.
    const std::array<QChartView*, 3>& plots() const { return plots_; }

private:
    void show_site(std::optional<int64_t> site_id);
    void select_row_of(std::optional<int64_t> site_id);

    TensorSitesModel& model_;
    ViewState& state_;
    std::shared_ptr<const Session> session_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* text_;
    QCheckBox* drifting_only_;
    QTreeView* table_;
    QLabel* title_;
    QLabel* evidence_;
    std::array<QChartView*, 3> plots_ {};
};

} // namespace fp8scope::gui
