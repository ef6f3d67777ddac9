// The analysed steps, one row each, with the figures the step navigator and the dashboard show: duration, bubble
// ratio, idle time, the cause with the most idle time, kernels and host-blocking calls. Every figure is the
// analyzer's (bubbles_per_step(), LaunchStats::steps, SyncReport::per_step); this model only lays them out.
#pragma once

#include "models/trace_session.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace fp8scope::gui {

class StepsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, Duration, BubbleRatio, Idle, TopCause, Kernels, Syncs, ColumnCount };
    // The step's index (StepInterval::index) on every cell, and the figure as a number for sorting.
    static constexpr int kStepIndexRole = Qt::UserRole + 1;
    static constexpr int kSortRole = Qt::UserRole + 2;

    explicit StepsModel(QObject* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The row of the step with this index, -1 when none.
    int row_of_step(int64_t step_index) const;

private:
    struct Row {
        analyzer::StepInterval step;
        analyzer::BubbleTotals bubbles;
        analyzer::BubbleCause top_cause = analyzer::BubbleCause::Host;
        int64_t kernels = 0;
        int64_t syncs = 0;
    };
    std::vector<Row> rows_;
};

} // namespace fp8scope::gui
