// The Kernels view's table: one row per distinct kernel name, from the analyzer's kernel_table() computed once at
// load (AnalysedTrace::kernels), so that the table opens and sorts without touching the model's rows. Every number
// has a sort role; KernelsFilter keeps the rows whose name contains a text and, optionally, of one class.
#pragma once

#include "models/trace_session.hpp"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <memory>
#include <optional>

namespace fp8scope::gui {

class KernelsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Class, Count, Total, Mean, Min, Max, StdDev, CountPerStep, TimePerStep, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole + 1; // numbers as numbers
    static constexpr int kClassRole = Qt::UserRole + 2; // the KernelClass as an int, on every cell

    explicit KernelsModel(QObject* parent = nullptr);

    void set_session(std::shared_ptr<const Session> session);
    // The analyzer's row behind a model row, null when out of range.
    const analyzer::KernelTableRow* row(int row) const;
    // The number of analysed steps (the denominator of the per-step figures).
    size_t steps() const;
    // The step number (StepInterval::index) of a position in the analysed steps (KernelStepFigures::step).
    int64_t step_index(size_t position) const;
    std::string_view name(const analyzer::KernelTableRow& row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const AnalysedTrace> run_;
};

class KernelsFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit KernelsFilter(QObject* parent = nullptr);
    // Rows whose name contains `text` (case-insensitive; empty: all).
    void set_text(const QString& text);
    // Rows of this class only (nullopt: all).
    void set_class(std::optional<analyzer::KernelClass> cls);

protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

private:
    QString text_;
    std::optional<analyzer::KernelClass> class_;
};

} // namespace fp8scope::gui
