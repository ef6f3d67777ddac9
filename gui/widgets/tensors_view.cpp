#include "widgets/tensors_view.hpp"

#include "widgets/charts.hpp"
#include "widgets/eliding_delegate.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/compare_wording.hpp"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

namespace {

constexpr size_t kMaxStepsWithPoints = 60;

// Keeps the rows whose site label contains a text, and optionally only the drifting sites.
class SitesFilter : public QSortFilterProxyModel {
public:
    explicit SitesFilter(QObject* parent)
        : QSortFilterProxyModel(parent)
    {
        setSortRole(TensorSitesModel::kSortRole);
        setFilterKeyColumn(TensorSitesModel::Site);
        setFilterCaseSensitivity(Qt::CaseInsensitive);
    }
    void set_drifting_only(bool only)
    {
        drifting_only_ = only;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override
    {
        if (drifting_only_) {
            const auto* model = static_cast<const TensorSitesModel*>(sourceModel());
            const auto id = model->site_id(row);
            const analyzer::CompareSite* site = id ? model->compared(*id) : nullptr;
            if (!site || site->drift.empty())
                return false;
        }
        return QSortFilterProxyModel::filterAcceptsRow(row, parent);
    }

private:
    bool drifting_only_ = false;
};

QLineSeries* line(const QString& name, const QColor& color, size_t points)
{
    auto* series = new QLineSeries();
    series->setName(name);
    series->setColor(color);
    series->setPointsVisible(points <= kMaxStepsWithPoints);
    return series;
}

// A dashed vertical line at a drifting site's onset, from `low` to `high` on the chart's axes.
void mark_onset(
    QChart& chart, const analyzer::CompareSite* site, double low, double high, QAbstractAxis* x, QAbstractAxis* y)
{
    if (!site || !site->onset_step)
        return;
    const int64_t onset = *site->onset_step;
    auto* marker = new QLineSeries();
    marker->setName(u"drift onset (step %1)"_s.arg(onset));
    QPen pen(attention_color());
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    marker->setPen(pen);
    marker->append(static_cast<double>(onset) - 0.5, low);
    marker->append(static_cast<double>(onset) - 0.5, high);
    chart.addSeries(marker);
    marker->attachAxis(x);
    marker->attachAxis(y);
}

} // namespace

TensorsView::TensorsView(TensorSitesModel& model, ViewState& state, QWidget* parent)
    : QWidget(parent)
    , model_(model)
    , state_(state)
    , proxy_(new SitesFilter(this))
    , text_(new QLineEdit(this))
    , drifting_only_(new QCheckBox(u"Drifting sites only"_s, this))
    , table_(new QTreeView(this))
    , title_(new QLabel(this))
    , evidence_(new QLabel(this))
{
    proxy_->setSourceModel(&model_);
    text_->setPlaceholderText(u"Filter sites…"_s);
    text_->setClearButtonEnabled(true);
    connect(text_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(drifting_only_, &QCheckBox::toggled, this,
        [this](bool only) { static_cast<SitesFilter*>(proxy_)->set_drifting_only(only); });
    table_->setModel(proxy_);
    table_->setRootIsDecorated(false);
    table_->setUniformRowHeights(true);
    table_->setAlternatingRowColors(true);
    table_->setSortingEnabled(true);
    // A label's end names the module and the operand.
    table_->setItemDelegateForColumn(TensorSitesModel::Site, new ElidingDelegate(Qt::ElideLeft, table_));
    connect(
        table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            const QVariant id = current.data(TensorSitesModel::kSiteIdRole);
            state_.select_site(id.isValid() ? std::optional<int64_t>(id.toLongLong()) : std::nullopt);
        });
    connect(&state_, &ViewState::site_selected, this, [this](std::optional<int64_t> id) {
        select_row_of(id);
        show_site(id);
    });

    auto* bar = new QHBoxLayout();
    bar->addWidget(text_, 1);
    bar->addWidget(drifting_only_);
    auto* left = new QWidget(this);
    auto* left_layout = new QVBoxLayout(left);
    left_layout->setContentsMargins(0, 0, 0, 0);
    left_layout->addLayout(bar);
    left_layout->addWidget(table_, 1);

    auto* right = new QWidget(this);
    auto* right_layout = new QVBoxLayout(right);
    right_layout->setContentsMargins(6, 0, 0, 0);
    title_->setWordWrap(true);
    title_->setTextFormat(Qt::PlainText);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    evidence_->setWordWrap(true);
    evidence_->setTextFormat(Qt::PlainText);
    evidence_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    right_layout->addWidget(title_);
    right_layout->addWidget(evidence_);
    const QString titles[] = { u"amax"_s, u"Saturation and underflow"_s, u"Headroom"_s };
    for (size_t i = 0; i < plots_.size(); ++i) {
        plots_[i] = make_chart_view(titles[i], right);
        plots_[i]->setMinimumHeight(200);
        plots_[i]->chart()->legend()->setAlignment(Qt::AlignRight);
        right_layout->addWidget(plots_[i], 1);
    }

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);
    show_site(std::nullopt);
}

void TensorsView::set_session(std::shared_ptr<const Session> session)
{
    session_ = std::move(session);
    drifting_only_->setEnabled(session_ && session_->compare);
    table_->setColumnHidden(TensorSitesModel::Drift, !(session_ && session_->compare));
    // With a reference, the drifting sites come first (by onset); alone, the table keeps the analyzer's order.
    table_->sortByColumn(session_ && session_->compare ? TensorSitesModel::Drift : -1, Qt::AscendingOrder);
    table_->header()->resizeSection(TensorSitesModel::Site, 380);
    for (int column = TensorSitesModel::Drift; column < TensorSitesModel::ColumnCount; ++column)
        table_->resizeColumnToContents(column);
    std::optional<int64_t> first;
    if (session_ && session_->compare && session_->compare->first_divergent)
        first = session_->compare->sites[*session_->compare->first_divergent].run_site_id;
    else if (model_.rowCount() > 0)
        first = proxy_->index(0, 0).data(TensorSitesModel::kSiteIdRole).toLongLong();
    state_.select_site(first);
    select_row_of(first);
    show_site(first);
}

void TensorsView::select_row_of(std::optional<int64_t> site_id)
{
    const int row = site_id ? model_.row_of_site(*site_id) : -1;
    const QModelIndex index = row >= 0 ? proxy_->mapFromSource(model_.index(row, 0)) : QModelIndex();
    if (index != table_->currentIndex() && (index.isValid() || !site_id)) {
        table_->setCurrentIndex(index);
        table_->scrollTo(index);
    }
}

void TensorsView::show_site(std::optional<int64_t> site_id)
{
    const analyzer::TensorSiteSeries* series = session_ && site_id ? session_->run->series_of(*site_id) : nullptr;
    if (!series) {
        title_->setText(session_ && session_->run->report.tensor_health.totals.samples == 0
                ? u"This trace has no tensor statistics (docs/tensor-stats.md says how to record them)."_s
                : u"Select a site to see its figures per step."_s);
        evidence_->clear();
        for (QChartView* plot : plots_)
            clear_chart(*plot->chart(), plot->chart()->title());
        return;
    }
    const analyzer::CompareSite* compare = model_.compared(*site_id);
    title_->setText(to_qstring(series->label));
    evidence_->setText(!compare ? QString()
            : compare->drift.empty()
            ? u"No drift against the reference (%1 common steps)."_s.arg(compare->steps.size())
            : u"Drifts against the reference %1: %2"_s.arg(to_qstring(present::onset_text(compare->onset_step)),
                to_qstring(present::site_evidence_text(*compare))));
    const auto& points = series->points;
    const int64_t first = points.empty() ? 0 : points.front().step;
    const int64_t last = points.empty() ? 0 : points.back().step;

    // amax of the run and of the reference on a log scale: a drift of a few x is a constant distance.
    QChart& amax = *plots_[0]->chart();
    clear_chart(amax, u"amax per step"_s);
    auto* run = line(u"run"_s, tensor_series_color(TensorSeries::Run), points.size());
    double low = std::numeric_limits<double>::infinity(), high = 0;
    const auto add = [&](QLineSeries* to, double step, double value) {
        if (!(value > 0) || !std::isfinite(value))
            return; // a log scale has no place for 0
        to->append(step, value);
        low = std::min(low, value);
        high = std::max(high, value);
    };
    for (const analyzer::TensorSeriesPoint& p : points)
        add(run, static_cast<double>(p.step), p.amax);
    QLineSeries* ref = nullptr;
    if (compare) {
        ref = line(u"reference"_s, tensor_series_color(TensorSeries::Reference), compare->steps.size());
        QPen pen = ref->pen();
        pen.setStyle(Qt::DashLine);
        ref->setPen(pen);
        for (const analyzer::CompareStep& s : compare->steps)
            if (s.amax_ref)
                add(ref, static_cast<double>(s.step), *s.amax_ref);
    }
    QValueAxis* x = step_axis(first, last);
    auto* y = new QLogValueAxis();
    y->setBase(10);
    y->setLabelFormat(u"%.3g"_s);
    y->setTitleText(u"amax (log)"_s);
    if (high > 0)
        y->setRange(low / 1.5, high * 1.5);
    amax.addAxis(x, Qt::AlignBottom);
    amax.addAxis(y, Qt::AlignLeft);
    for (QLineSeries* s : { run, ref }) {
        if (!s)
            continue;
        amax.addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
    }
    if (high > 0)
        mark_onset(amax, compare, low / 1.5, high * 1.5, x, y);

    // Saturation and underflow in percent of the elements.
    QChart& ratios = *plots_[1]->chart();
    clear_chart(ratios, u"Saturation and underflow per step"_s);
    auto* saturation = line(u"saturation"_s, tensor_series_color(TensorSeries::Saturation), points.size());
    auto* underflow = line(u"underflow"_s, tensor_series_color(TensorSeries::Underflow), points.size());
    double max_percent = 0;
    for (const analyzer::TensorSeriesPoint& p : points) {
        if (p.saturation_ratio) {
            saturation->append(static_cast<double>(p.step), 100 * *p.saturation_ratio);
            max_percent = std::max(max_percent, 100 * *p.saturation_ratio);
        }
        if (p.underflow_ratio) {
            underflow->append(static_cast<double>(p.step), 100 * *p.underflow_ratio);
            max_percent = std::max(max_percent, 100 * *p.underflow_ratio);
        }
    }
    QValueAxis* rx = step_axis(first, last);
    QValueAxis* ry = value_axis(0, max_percent, u"% of elements"_s, u"%.3g"_s, 100.0);
    attach(ratios, saturation, rx, ry);
    attach(ratios, underflow, rx, ry);
    if (saturation->count() == 0)
        saturation->setName(u"saturation: n/a (no FP8 format)"_s);
    if (underflow->count() == 0)
        underflow->setName(u"underflow: n/a for FP8 input"_s);
    mark_onset(ratios, compare, 0, ry->max(), rx, ry);

    // Headroom in bits: below 0 the cast clips.
    QChart& headroom = *plots_[2]->chart();
    clear_chart(headroom, u"Headroom per step: log2(fp8_max · scale_inv / amax), below 0 clips"_s);
    auto* bits = line(u"headroom"_s, tensor_series_color(TensorSeries::Headroom), points.size());
    double bits_low = 0, bits_high = 0;
    for (const analyzer::TensorSeriesPoint& p : points)
        if (p.headroom_bits) {
            bits->append(static_cast<double>(p.step), *p.headroom_bits);
            bits_low = std::min(bits_low, *p.headroom_bits);
            bits_high = std::max(bits_high, *p.headroom_bits);
        }
    if (bits->count() == 0)
        bits->setName(u"headroom: n/a (no FP8 scale)"_s);
    QValueAxis* hx = step_axis(first, last);
    QValueAxis* hy = value_axis(bits_low, bits_high, u"bits"_s, u"%.2g"_s);
    attach(headroom, bits, hx, hy);
    auto* zero = new QLineSeries();
    zero->setName(u"0: clipping"_s);
    QPen zero_pen(QColor(0x55, 0x55, 0x55));
    zero_pen.setStyle(Qt::DotLine);
    zero->setPen(zero_pen);
    zero->append(static_cast<double>(first) - 0.5, 0);
    zero->append(static_cast<double>(last) + 0.5, 0);
    attach(headroom, zero, hx, hy);
    mark_onset(headroom, compare, hy->min(), hy->max(), hx, hy);
}

} // namespace fp8scope::gui
