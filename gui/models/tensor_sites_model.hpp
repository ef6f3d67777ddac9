// The Tensors view's site table: one row per tensor site with samples in the analysed steps (the analyzer's
// TensorHealth::sites), its amax range, worst saturation and underflow, least headroom and NaN/Inf samples, and,
// with a reference open, its drift: sites the comparison flags are shown in the warning colour, the first
// divergent one in bold, each with its onset step. Wording is the CLI's (cli/report/report_tensor.hpp).
#pragma once

#include "models/trace_session.hpp"

#include <QAbstractTableModel>

#include <map>
#include <memory>
#include <optional>

namespace fp8scope::gui {

class TensorSitesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Site, Drift, Samples, Amax, Saturation, Underflow, Headroom, Nonfinite, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole + 1;
    static constexpr int kSiteIdRole = Qt::UserRole + 2; // the run's TensorSite::id, on every cell

    explicit TensorSitesModel(QObject* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);

    // The run's site id of a row, and the row of a site id (-1 when none).
    std::optional<int64_t> site_id(int row) const;
    int row_of_site(int64_t site_id) const;
    // The compared site for a run site, null without a reference or when it was not matched.
    const analyzer::CompareSite* compared(int64_t run_site_id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Session> session_;
    std::map<int64_t, size_t> compared_; // run site id -> CompareResult::sites index
};

} // namespace fp8scope::gui
