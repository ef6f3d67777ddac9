#include "models/kernels_model.hpp"

#include "models/display_text.hpp"

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

KernelsModel::KernelsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void KernelsModel::set_session(std::shared_ptr<const Session> session)
{
    beginResetModel();
    run_ = session ? session->run : nullptr;
    endResetModel();
}

const analyzer::KernelTableRow* KernelsModel::row(int row) const
{
    if (!run_ || row < 0 || static_cast<size_t>(row) >= run_->kernels.rows.size())
        return nullptr;
    return &run_->kernels.rows[static_cast<size_t>(row)];
}

size_t KernelsModel::steps() const
{
    return run_ ? run_->kernels.steps : 0;
}

int64_t KernelsModel::step_index(size_t position) const
{
    const auto& steps = run_->report.steps.steps;
    return position < steps.size() ? steps[position].index : static_cast<int64_t>(position);
}

std::string_view KernelsModel::name(const analyzer::KernelTableRow& row) const
{
    return run_->model.strings[row.name];
}

int KernelsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !run_ ? 0 : static_cast<int>(run_->kernels.rows.size());
}

int KernelsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const analyzer::KernelTableRow& r = *row(index.row());
    const auto number = [&](double value) -> QVariant { return value; };
    if (role == kClassRole)
        return static_cast<int>(r.cls);
    if (role == kSortRole || role == Qt::DisplayRole) {
        const bool display = role == Qt::DisplayRole;
        const auto duration = [&](double ns) -> QVariant { return display ? QVariant(duration_text(ns)) : number(ns); };
        switch (index.column()) {
        case Name:
            return to_qstring(run_->model.strings[r.name]);
        case Class:
            return to_qstring(analyzer::kernel_class_label(r.cls));
        case Count:
            return display ? QVariant(QString::number(r.count)) : QVariant::fromValue<qlonglong>(r.count);
        case Total:
            return duration(static_cast<double>(r.total_ns));
        case Mean:
            return duration(r.mean_ns);
        case Min:
            return duration(static_cast<double>(r.min_ns));
        case Max:
            return duration(static_cast<double>(r.max_ns));
        case StdDev:
            return duration(r.stddev_ns);
        case CountPerStep:
            return display ? QVariant(QString::number(r.count_per_step, 'f', r.count_per_step < 10 ? 2 : 1))
                           : number(r.count_per_step);
        case TimePerStep:
            return duration(r.time_per_step_ns);
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Name)
        return to_qstring(run_->model.strings[r.name]);
    if (role == Qt::DecorationRole && index.column() == Class)
        return class_color(r.cls);
    if (role == Qt::TextAlignmentRole && index.column() > Class)
        return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant KernelsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    static const QString kTitles[] = { u"Kernel"_s, u"Class"_s, u"Count"_s, u"Total"_s, u"Mean"_s, u"Min"_s, u"Max"_s,
        u"Std dev"_s, u"Per step"_s, u"Time / step"_s };
    static const QString kTips[] = { u"Demangled name (the short name when there is none)"_s,
        u"FP8 overhead class, from the name (docs/analysis.md)"_s, u"Kernels of this name in the whole trace"_s,
        u"Summed duration over the whole trace"_s, u"Mean duration"_s, u"Shortest"_s, u"Longest"_s,
        u"Standard deviation of the durations"_s, u"Kernels per analysed step"_s,
        u"Summed duration per analysed step"_s };
    if (role == Qt::DisplayRole)
        return kTitles[section];
    if (role == Qt::ToolTipRole)
        return kTips[section];
    return {};
}

KernelsFilter::KernelsFilter(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(KernelsModel::kSortRole);
}

void KernelsFilter::set_text(const QString& text)
{
    text_ = text;
    invalidateFilter();
}

void KernelsFilter::set_class(std::optional<analyzer::KernelClass> cls)
{
    class_ = cls;
    invalidateFilter();
}

bool KernelsFilter::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const
{
    const QModelIndex name = sourceModel()->index(source_row, KernelsModel::Name, source_parent);
    if (class_ && sourceModel()->data(name, KernelsModel::kClassRole).toInt() != static_cast<int>(*class_))
        return false;
    return text_.isEmpty() || sourceModel()->data(name).toString().contains(text_, Qt::CaseInsensitive);
}

} // namespace fp8scope::gui
