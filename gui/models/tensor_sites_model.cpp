#include "models/tensor_sites_model.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/tensor_wording.hpp"

#include <QBrush>
#include <QFont>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

TensorSitesModel::TensorSitesModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorSitesModel::set_session(std::shared_ptr<const Session> session)
{
    beginResetModel();
    session_ = std::move(session);
    compared_.clear();
    if (session_ && session_->compare)
        for (size_t i = 0; i < session_->compare->sites.size(); ++i)
            compared_.emplace(session_->compare->sites[i].run_site_id, i);
    endResetModel();
}

std::optional<int64_t> TensorSitesModel::site_id(int row) const
{
    if (!session_ || row < 0 || row >= rowCount())
        return std::nullopt;
    return session_->run->report.tensor_health.sites[static_cast<size_t>(row)].site_id;
}

int TensorSitesModel::row_of_site(int64_t site_id) const
{
    for (int row = 0; row < rowCount(); ++row)
        if (this->site_id(row) == site_id)
            return row;
    return -1;
}

const analyzer::CompareSite* TensorSitesModel::compared(int64_t run_site_id) const
{
    const auto it = compared_.find(run_site_id);
    return it == compared_.end() ? nullptr : &session_->compare->sites[it->second];
}

int TensorSitesModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !session_ ? 0 : static_cast<int>(session_->run->report.tensor_health.sites.size());
}

int TensorSitesModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorSitesModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const analyzer::TensorSiteHealth& site
        = session_->run->report.tensor_health.sites[static_cast<size_t>(index.row())];
    const analyzer::CompareSite* compare = compared(site.site_id);
    const bool drifts = compare && !compare->drift.empty();
    const bool first = drifts && session_->compare->first_divergent
        && &session_->compare->sites[*session_->compare->first_divergent] == compare;
    switch (role) {
    case kSiteIdRole:
        return QVariant::fromValue<qlonglong>(site.site_id);
    case Qt::DisplayRole:
        switch (index.column()) {
        case Site:
            return to_qstring(site.label);
        case Samples:
            return QString::number(site.samples);
        case Amax:
            return to_qstring(present::amax_range_text(site));
        case Saturation:
            return to_qstring(present::worst_saturation_text(site));
        case Underflow:
            return to_qstring(present::worst_underflow_text(site));
        case Headroom:
            return to_qstring(present::min_headroom_text(site));
        case Nonfinite:
            return QString::number(site.nonfinite_samples);
        case Drift:
            if (!session_->compare)
                return QString();
            if (!compare)
                return u"not matched"_s;
            return drifts
                ? (first ? u"first divergent, "_s : QString()) + to_qstring(present::onset_text(compare->onset_step))
                : u"no"_s;
        default:
            return {};
        }
    case kSortRole:
        switch (index.column()) {
        case Site:
            return to_qstring(site.label);
        case Samples:
            return QVariant::fromValue<qlonglong>(site.samples);
        case Amax:
            return site.amax_max.value_or(-1.0);
        case Saturation:
            return site.saturation_samples > 0 ? site.worst_saturation_ratio : -1.0;
        case Underflow:
            return site.underflow_samples > 0 ? site.worst_underflow_ratio : -1.0;
        case Headroom:
            return site.min_headroom_bits.value_or(1e9);
        case Nonfinite:
            return QVariant::fromValue<qlonglong>(site.nonfinite_samples);
        case Drift:
            // Drifting sites first by onset, then the healthy, then the unmatched.
            return drifts ? static_cast<double>(compare->onset_step.value_or(0)) : compare ? 1e12 : 2e12;
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (compare && drifts)
            return to_qstring(site.label) + u"\n"_s + to_qstring(present::site_evidence_text(*compare));
        return to_qstring(site.label);
    case Qt::ForegroundRole:
        if (drifts)
            return QBrush(attention_color());
        return {};
    case Qt::FontRole:
        if (first) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() != Site && index.column() != Drift)
            return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant TensorSitesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return {};
    static const QString kTitles[] = { u"Site"_s, u"Drift vs reference"_s, u"Samples"_s, u"amax min..max"_s,
        u"Worst saturation"_s, u"Worst underflow"_s, u"Least headroom"_s, u"NaN/Inf samples"_s };
    return kTitles[section];
}

} // namespace fp8scope::gui
