// The findings of a session, one row each: the scaling-drift findings of the comparison with a reference (the
// first divergent site first, then the loss delta when it is over its threshold), then the report's
// recommendations, largest estimated saving first. Each row knows where it points in the trace (target()), so that
// selecting it can move the timeline and the tensor view there.
#pragma once

#include "models/trace_session.hpp"

#include <QAbstractTableModel>

#include <memory>
#include <optional>
#include <vector>

namespace fp8scope::gui {

// Where a finding points: a step to show, the cause to highlight in it, a tensor site to select.
struct FindingTarget {
    std::optional<int64_t> step; // StepInterval::index
    std::optional<analyzer::BubbleCause> cause;
    std::optional<int64_t> run_site_id; // TensorSite::id in the run
};

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kind, Finding, Saving, Where, Why, ColumnCount };
    // What a column sorts by: the saving per step in ns for Saving (-1 without one), the text otherwise.
    static constexpr int kSortRole = Qt::UserRole + 1;

    explicit FindingsModel(QObject* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    FindingTarget target(int row) const;

private:
    struct Row {
        QString kind, finding, saving, where, why;
        std::optional<int64_t> saving_ns;
        FindingTarget target;
        bool numerics = false; // a drift or loss finding (shown in the warning colour)
    };
    std::vector<Row> rows_;
};

} // namespace fp8scope::gui
