#include "widgets/kernels_view.hpp"

#include "widgets/charts.hpp"
#include "widgets/eliding_delegate.hpp"

#include "models/display_text.hpp"

#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

KernelsView::KernelsView(KernelsModel& model, QWidget* parent)
    : QWidget(parent)
    , model_(model)
    , filter_(new KernelsFilter(this))
    , text_(new QLineEdit(this))
    , class_(new QComboBox(this))
    , summary_(new QLabel(this))
    , table_(new QTreeView(this))
    , per_step_(make_chart_view(u"Select a kernel to see it per step"_s, this))
{
    filter_->setSourceModel(&model_);
    text_->setPlaceholderText(u"Filter kernel names…"_s);
    text_->setClearButtonEnabled(true);
    connect(text_, &QLineEdit::textChanged, filter_, &KernelsFilter::set_text);
    class_->addItem(u"All classes"_s);
    for (size_t c = 0; c < analyzer::kKernelClassCount; ++c) {
        const auto cls = static_cast<analyzer::KernelClass>(c);
        class_->addItem(to_qstring(analyzer::kernel_class_label(cls)), static_cast<int>(c));
        class_->setItemData(class_->count() - 1, class_color(cls), Qt::DecorationRole);
    }
    connect(class_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const QVariant cls = class_->itemData(index);
        filter_->set_class(
            cls.isValid() ? std::optional(static_cast<analyzer::KernelClass>(cls.toInt())) : std::nullopt);
    });

    table_->setModel(filter_);
    table_->setRootIsDecorated(false);
    table_->setUniformRowHeights(true);
    table_->setAlternatingRowColors(true);
    table_->setSortingEnabled(true);
    // Template arguments in the middle of a name matter least.
    table_->setItemDelegateForColumn(KernelsModel::Name, new ElidingDelegate(Qt::ElideMiddle, table_));
    table_->sortByColumn(KernelsModel::Total, Qt::DescendingOrder);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { show_kernel(current); });

    auto* bar = new QHBoxLayout();
    bar->addWidget(text_, 2);
    bar->addWidget(class_);
    bar->addWidget(summary_, 3);
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addLayout(bar);
    top_layout->addWidget(table_, 1);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(top);
    splitter->addWidget(per_step_);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);
}

void KernelsView::set_session(std::shared_ptr<const Session> session)
{
    if (!session) {
        summary_->clear();
        return;
    }
    const analyzer::KernelTableResult& k = session->run->kernels;
    summary_->setText(u"%1 kernel names, %2 kernels, %3 of kernel time in the trace; per step: over the %4 analysed "
                      "steps"_s.arg(k.rows.size())
                          .arg(k.kernels)
                          .arg(duration_text(static_cast<double>(k.total_ns)))
                          .arg(k.steps));
    for (int column = KernelsModel::Class; column < KernelsModel::ColumnCount; ++column)
        table_->resizeColumnToContents(column);
    table_->header()->setStretchLastSection(false);
    table_->header()->setSectionResizeMode(KernelsModel::Name, QHeaderView::Stretch);
    table_->setCurrentIndex(filter_->index(0, 0));
}

void KernelsView::show_kernel(const QModelIndex& proxy_index)
{
    QChart& chart = *per_step_->chart();
    clear_chart(chart, chart.title());
    const analyzer::KernelTableRow* row = model_.row(filter_->mapToSource(proxy_index).row());
    if (row && row->per_step.empty())
        row = nullptr; // it never ran in an analysed step: nothing to plot
    if (!row) {
        chart.setTitle(u"Select a kernel to see it per step"_s);
        return;
    }
    // Chart titles are rich text: a template's '<' must stay text.
    chart.setTitle(u"%1 per analysed step"_s.arg(QFontMetrics(chart.titleFont())
                                                     .elidedText(to_qstring(model_.name(*row)), Qt::ElideMiddle, 700)
                                                     .toHtmlEscaped()));
    double max_ns = 0;
    int64_t max_count = 0;
    for (const analyzer::KernelStepFigures& s : row->per_step) {
        max_ns = std::max(max_ns, static_cast<double>(s.time_ns));
        max_count = std::max(max_count, s.count);
    }
    const DurationUnit unit = duration_unit(max_ns);
    auto* time = new QLineSeries();
    time->setName(u"time in the step (%1, left)"_s.arg(unit.name));
    QPen solid(QColor(u"#1f77b4"_s));
    solid.setWidthF(2);
    time->setPen(solid);
    auto* count = new QLineSeries();
    count->setName(u"kernels in the step (right)"_s);
    count->setColor(QColor(0x55, 0x55, 0x55));
    QPen dashed = count->pen();
    dashed.setStyle(Qt::DashLine);
    count->setPen(dashed);
    const bool points = row->per_step.size() <= 60;
    time->setPointsVisible(points);
    count->setPointsVisible(points);
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const analyzer::KernelStepFigures& s : row->per_step) {
        const auto step = static_cast<double>(model_.step_index(s.step));
        time->append(step, static_cast<double>(s.time_ns) / unit.ns);
        count->append(step, static_cast<double>(s.count));
        first = std::min(first, model_.step_index(s.step));
        last = std::max(last, model_.step_index(s.step));
    }
    if (row->per_step.empty())
        first = last = 0;
    QValueAxis* x = step_axis(first, last);
    attach(chart, time, x, value_axis(0, max_ns / unit.ns, u"time (%1)"_s.arg(unit.name)));
    QValueAxis* right = value_axis(0, static_cast<double>(max_count), u"kernels"_s, u"%.0f"_s);
    chart.addAxis(right, Qt::AlignRight);
    chart.addSeries(count);
    count->attachAxis(x);
    count->attachAxis(right);
}

} // namespace fp8scope::gui
