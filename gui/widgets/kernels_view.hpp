// The Kernels tab: the kernel table (KernelsModel), sortable, filtered by name and class, and below it the selected
// kernel's count and time in each analysed step.
#pragma once

#include "models/kernels_model.hpp"

#include <QWidget>

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QTreeView;

namespace fp8scope::gui {

class KernelsView : public QWidget {
    Q_OBJECT
public:
    KernelsView(KernelsModel& model, QWidget* parent = nullptr);

    QTreeView& table() { return *table_; }
    KernelsFilter& filter() { return *filter_; }
    void set_session(std::shared_ptr<const Session> session);

private:
    void show_kernel(const QModelIndex& proxy_index);

    KernelsModel& model_;
    KernelsFilter* filter_;
    QLineEdit* text_;
    QComboBox* class_;
    QLabel* summary_;
    QTreeView* table_;
    QChartView* per_step_;
};

} // namespace fp8scope::gui
