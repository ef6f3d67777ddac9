#include "models/steps_model.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/figures.hpp"

#include <QBrush>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

StepsModel::StepsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StepsModel::set_session(std::shared_ptr<const Session> session)
{
    beginResetModel();
    rows_.clear();
    if (session && session->run) {
        const analyzer::Report& report = session->run->report;
        const std::vector<analyzer::StepBubbleTotals> bubbles = analyzer::bubbles_per_step(report);
        const size_t steps = report.steps.steps.size();
        for (size_t i = 0; i < steps; ++i) {
            Row row;
            row.step = report.steps.steps[i];
            if (i < bubbles.size())
                row.bubbles = bubbles[i].totals;
            row.top_cause = present::top_cause(row.bubbles);
            if (i < report.launch.steps.size())
                row.kernels = report.launch.steps[i].kernels;
            if (i < report.syncs.per_step.size())
                row.syncs = report.syncs.per_step[i].count;
            rows_.push_back(row);
        }
    }
    endResetModel();
}

int StepsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int StepsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant StepsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const int64_t duration_ns = row.step.end_ns - row.step.start_ns;
    if (role == kStepIndexRole)
        return QVariant::fromValue<qlonglong>(row.step.index);
    if (role == kSortRole) {
        switch (index.column()) {
        case Step:
            return QVariant::fromValue<qlonglong>(row.step.index);
        case Duration:
            return QVariant::fromValue<qlonglong>(duration_ns);
        case BubbleRatio:
            return row.bubbles.bubble_ratio;
        case Idle:
            return QVariant::fromValue<qlonglong>(row.bubbles.idle_ns);
        case TopCause:
            return cause_name(row.top_cause);
        case Kernels:
            return QVariant::fromValue<qlonglong>(row.kernels);
        default:
            return QVariant::fromValue<qlonglong>(row.syncs);
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Step:
            return QString::number(row.step.index);
        case Duration:
            return duration_text(static_cast<double>(duration_ns));
        case BubbleRatio:
            return percent_text(row.bubbles.bubble_ratio);
        case Idle:
            return duration_text(static_cast<double>(row.bubbles.idle_ns));
        case TopCause:
            return row.bubbles.idle_ns > 0 ? cause_name(row.top_cause) : QString();
        case Kernels:
            return QString::number(row.kernels);
        default:
            return QString::number(row.syncs);
        }
    }
    if (role == Qt::DecorationRole && index.column() == TopCause && row.bubbles.idle_ns > 0)
        return cause_color(row.top_cause);
    if (role == Qt::TextAlignmentRole && index.column() != TopCause)
        return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant StepsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return {};
    static const QString kTitles[]
        = { u"Step"_s, u"Duration"_s, u"Bubble ratio"_s, u"Idle"_s, u"Top cause"_s, u"Kernels"_s, u"Syncs"_s };
    return kTitles[section];
}

int StepsModel::row_of_step(int64_t step_index) const
{
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].step.index == step_index)
            return static_cast<int>(i);
    return -1;
}

} // namespace fp8scope::gui
