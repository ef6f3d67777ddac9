#include "models/findings_model.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/numerics_wording.hpp"

#include <QBrush>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

FindingsModel::FindingsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void FindingsModel::set_session(std::shared_ptr<const Session> session)
{
    beginResetModel();
    rows_.clear();
    if (session && session->compare) {
        const analyzer::CompareResult& compare = *session->compare;
        const analyzer::CompareVerdict verdict = analyzer::default_compare_verdict(compare);
        for (const size_t index : compare.flagged) {
            const analyzer::CompareSite& site = compare.sites[index];
            const bool first = compare.first_divergent == index;
            std::string finding = site.label;
            if (!site.also.empty())
                finding += " (also " + std::to_string(site.also.size()) + " other site"
                    + (site.also.size() == 1 ? "" : "s") + " of the same tensor)";
            rows_.push_back(Row {
                .kind = first ? u"first divergent tensor"_s : u"scaling drift"_s,
                .finding = to_qstring(finding),
                .saving = {},
                .where = to_qstring(present::onset_text(site.onset_step)),
                .why = to_qstring(present::site_evidence_text(site)),
                .saving_ns = std::nullopt,
                .target = FindingTarget { site.onset_step, std::nullopt, site.run_site_id },
                .numerics = true,
            });
        }
        if (!verdict.loss.passed)
            rows_.push_back(Row {
                .kind = u"loss delta"_s,
                .finding = compare.loss.final_relative_delta ? u"Loss delta %1 against the reference"_s.arg(
                               to_qstring(present::delta_percent(*compare.loss.final_relative_delta)))
                                                             : u"Loss differs from the reference"_s,
                .saving = {},
                .where = compare.loss.max_step ? u"largest at step %1"_s.arg(*compare.loss.max_step) : QString(),
                .why = to_qstring(present::loss_sentence(compare.loss, present::as_is)),
                .saving_ns = std::nullopt,
                .target = FindingTarget { compare.loss.max_step, std::nullopt, std::nullopt },
                .numerics = true,
            });
    }
    // The run's own numerics verdict (docs/analysis.md "Numerics verdict"): numerics before speed.
    if (session && session->run)
        for (const analyzer::NumericsFinding& f : session->run->report.numerics.findings)
            rows_.push_back(Row {
                .kind = f.severity == analyzer::NumericsVerdict::Broken ? u"numerics broken"_s : u"numerics at risk"_s,
                .finding = to_qstring(present::finding_sentence(f, present::as_is)),
                .saving = {},
                .where = u"step %1"_s.arg(f.onset_step),
                .why = to_qstring(present::finding_fix(f)
                    + (f.read_by.empty() ? std::string() : "; " + present::read_by_text(f, present::as_is))),
                .saving_ns = std::nullopt,
                .target = FindingTarget { f.onset_step, std::nullopt, f.site_id },
                .numerics = true,
            });
    if (session && session->run) {
        for (const analyzer::Recommendation& r : session->run->what_if.recommendations) {
            rows_.push_back(Row {
                .kind = u"performance"_s,
                .finding = to_qstring(r.title),
                .saving = u"%1 (%2)"_s.arg(
                    duration_text(static_cast<double>(r.saving_per_step_ns)), percent_text(r.saving_share)),
                .where = to_qstring(present::worst_step_text(r.worst_step, r.kind)),
                .why = to_qstring(r.reason),
                .saving_ns = r.saving_per_step_ns,
                .target = FindingTarget { r.worst_step ? std::optional(r.worst_step->step_index) : std::nullopt,
                    analyzer::recommendation_cause(r.kind), std::nullopt },
                .numerics = false,
            });
        }
    }
    endResetModel();
}

int FindingsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const auto text = [&]() -> const QString& {
        switch (index.column()) {
        case Kind:
            return row.kind;
        case Finding:
            return row.finding;
        case Saving:
            return row.saving;
        case Where:
            return row.where;
        default:
            return row.why;
        }
    };
    switch (role) {
    case Qt::DisplayRole:
        return text();
    case Qt::ToolTipRole:
        return u"%1: %2\n%3\n%4"_s.arg(row.kind, row.finding, row.where, row.why);
    case Qt::ForegroundRole:
        if (row.numerics && (index.column() == Kind || index.column() == Finding))
            return QBrush(attention_color());
        return {};
    case kSortRole:
        if (index.column() == Saving)
            return QVariant::fromValue<qlonglong>(row.saving_ns.value_or(-1));
        return text();
    default:
        return {};
    }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount)
        return {};
    static const QString kTitles[] = { u"Kind"_s, u"Finding"_s, u"Estimated saving / step"_s, u"Where"_s, u"Why"_s };
    return kTitles[section];
}

FindingTarget FindingsModel::target(int row) const
{
    if (row < 0 || static_cast<size_t>(row) >= rows_.size())
        return {};
    return rows_[static_cast<size_t>(row)].target;
}

} // namespace fp8scope::gui
