#include "widgets/dashboard_view.hpp"

#include "widgets/charts.hpp"
#include "widgets/eliding_delegate.hpp"
#include "widgets/fp8_whatif_panel.hpp"

#include "models/display_text.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/numerics_wording.hpp"
#include "fp8scope/present/tensor_wording.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QTableWidget>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QPieSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;
using analyzer::BubbleCause;
using analyzer::KernelClass;

namespace {

// Points are drawn on the bubble-ratio line while they stay apart.
constexpr size_t kMaxStepsWithPoints = 60;

QString escaped(std::string_view text)
{
    return to_qstring(text).toHtmlEscaped();
}

QLabel* text_label(QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText); // built from escaped trace text only (escaped())
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    return label;
}

// The headline: what was opened, its steps and recording, and the figures a reader looks for first.
QString headline_html(const AnalysedTrace& run)
{
    const analyzer::Report& r = run.report;
    const analyzer::BubbleTotals& t = r.totals;
    const size_t steps = r.steps.steps.size();
    QString causes;
    for (const BubbleCause c : present::causes_to_show(r)) {
        if (!causes.isEmpty())
            causes += u", "_s;
        causes += u"<span style='color:%1'>■</span> %2 %3"_s.arg(cause_color(c).name(), cause_name(c),
            percent_text(t.step_ns > 0 ? static_cast<double>(t.cause_ns[static_cast<size_t>(c)]) / t.step_ns : 0.0));
    }
    const QString ratio_colour = [&] {
        switch (present::bubble_ratio_severity(t.bubble_ratio)) {
        case present::Severity::Bad:
            return attention_color().name();
        case present::Severity::Warn:
            return cause_color(BubbleCause::Launch).name();
        case present::Severity::Ok:
            break;
        }
        return u"#2ca02c"_s;
    }();
    QString html = u"<p style='font-size:large'><b>%1</b></p><p>%2<br>%3. Recording: %4.</p>"_s.arg(
        escaped(run.model.path), escaped(run.model.meta.producer), escaped(present::steps_sentence(r.steps)),
        escaped(present::recording_sentence(r.recording)));
    // A scalar that went NaN (a diverging loss) is news wherever it is: the report's warning line.
    if (!r.nan_scalars.empty())
        html += u"<p style='color:%1'>NaN scalars: %2.</p>"_s.arg(
            attention_color().name(), escaped(present::nan_scalars_sentence(r.nan_scalars)));
    html += u"<p style='font-size:large'>Step time <b>%1</b> · busy <b>%2</b> · bubble ratio "
            "<b style='color:%3'>%4</b> · %5 kernels per step</p>"_s.arg(
                duration_text(static_cast<double>(present::per_step(t.step_ns, steps))),
                percent_text(t.step_ns > 0 ? static_cast<double>(t.busy_ns) / t.step_ns : 0.0), ratio_colour,
                percent_text(t.bubble_ratio), to_qstring(present::per_step_rate(r.launch.kernels, steps, 0)));
    html += u"<p>Idle time by cause (share of step time): %1</p>"_s.arg(causes);
    return html;
}

// Bubble ratio per step as a line, with the ratio over all steps dashed.
QChartView* bubble_ratio_chart(const analyzer::Report& r, QWidget* parent)
{
    QChartView* view = make_chart_view(u"Bubble ratio per step"_s, parent);
    QChart& chart = *view->chart();
    const std::vector<analyzer::StepBubbleTotals> steps = analyzer::bubbles_per_step(r);
    auto* line = new QLineSeries();
    line->setName(u"idle / step time"_s);
    double max_percent = 100.0 * r.totals.bubble_ratio;
    for (const analyzer::StepBubbleTotals& s : steps) {
        line->append(static_cast<double>(s.step_index), 100.0 * s.totals.bubble_ratio);
        max_percent = std::max(max_percent, 100.0 * s.totals.bubble_ratio);
    }
    line->setPointsVisible(steps.size() <= kMaxStepsWithPoints);
    line->setColor(QColor(u"#1f77b4"_s));
    auto* overall = new QLineSeries();
    overall->setName(u"over all steps %1"_s.arg(percent_text(r.totals.bubble_ratio)));
    const int64_t first = steps.empty() ? 0 : steps.front().step_index;
    const int64_t last = steps.empty() ? 0 : steps.back().step_index;
    overall->append(static_cast<double>(first) - 0.5, 100.0 * r.totals.bubble_ratio);
    overall->append(static_cast<double>(last) + 0.5, 100.0 * r.totals.bubble_ratio);
    QPen dashed(QColor(u"#555555"_s));
    dashed.setStyle(Qt::DashLine);
    overall->setPen(dashed);
    QValueAxis* x = step_axis(first, last);
    QValueAxis* y = value_axis(0, max_percent, u"bubble ratio (%)"_s, u"%.0f"_s, 100.0);
    attach(chart, line, x, y);
    attach(chart, overall, x, y);
    return view;
}

// Idle time per step by cause, stacked, each step a flat run over [step - 0.5, step + 0.5].
QChartView* idle_by_cause_chart(const analyzer::Report& r, QWidget* parent)
{
    const std::vector<analyzer::StepBubbleTotals> steps = analyzer::bubbles_per_step(r);
    QChartView* view = make_chart_view(r.bubbles.devices.size() > 1 && !r.device
            ? u"Idle time per step by cause (summed over the devices)"_s
            : u"Idle time per step by cause"_s,
        parent);
    QChart& chart = *view->chart();
    double max_idle_ns = 0;
    for (const analyzer::StepBubbleTotals& s : steps)
        max_idle_ns = std::max(max_idle_ns, static_cast<double>(s.totals.idle_ns));
    const DurationUnit unit = duration_unit(max_idle_ns);
    const int64_t first = steps.empty() ? 0 : steps.front().step_index;
    const int64_t last = steps.empty() ? 0 : steps.back().step_index;
    QValueAxis* x = step_axis(first, last);
    QValueAxis* y = value_axis(0, max_idle_ns / unit.ns, u"idle per step (%1)"_s.arg(unit.name));
    std::vector<double> below(steps.size(), 0.0);
    for (const BubbleCause cause : present::causes_to_show(r)) {
        auto* lower = new QLineSeries();
        auto* upper = new QLineSeries();
        for (size_t i = 0; i < steps.size(); ++i) {
            const auto step = static_cast<double>(steps[i].step_index);
            const double top
                = below[i] + static_cast<double>(steps[i].totals.cause_ns[static_cast<size_t>(cause)]) / unit.ns;
            lower->append(step - 0.5, below[i]);
            lower->append(step + 0.5, below[i]);
            upper->append(step - 0.5, top);
            upper->append(step + 0.5, top);
            below[i] = top;
        }
        auto* area = new QAreaSeries(upper, lower);
        // An area series does not own its boundary lines (Qt Charts' documentation): it does now.
        upper->setParent(area);
        lower->setParent(area);
        area->setName(cause_name(cause));
        area->setColor(cause_color(cause));
        area->setBorderColor(cause_color(cause).darker(115));
        attach(chart, area, x, y);
    }
    return view;
}

// Kernel time per step by class: a ring whose legend gives each class's time per step and share of kernel time.
QChartView* kernel_class_chart(const analyzer::Report& r, QWidget* parent)
{
    QChartView* view = make_chart_view(u"FP8 overhead: kernel time per step by class"_s, parent);
    QChart& chart = *view->chart();
    const analyzer::KernelClassReport& k = r.kernel_classes;
    const size_t steps = r.steps.steps.size();
    auto* ring = new QPieSeries();
    ring->setHoleSize(0.45);
    for (size_t c = 0; c < analyzer::kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        if (k.of(cls).count == 0)
            continue;
        const QString label = u"%1  %2/step (%3)"_s.arg(to_qstring(analyzer::kernel_class_label(cls)),
            duration_text(static_cast<double>(present::per_step(k.of(cls).time_ns, steps))),
            percent_text(k.share_of_kernel_time(cls)));
        QPieSlice* slice = ring->append(label, static_cast<double>(k.of(cls).time_ns));
        slice->setColor(class_color(cls));
        slice->setBorderColor(Qt::white);
    }
    chart.addSeries(ring);
    chart.legend()->setAlignment(Qt::AlignRight);
    return view;
}

// The ring and, below it, what FP8 adds per step in kernels: the launches are what can leave a step launch-bound.
QWidget* kernel_class_panel(const analyzer::Report& r, QWidget* parent)
{
    auto* panel = new QWidget(parent);
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(kernel_class_chart(r, panel), 1);
    const analyzer::KernelClassReport& k = r.kernel_classes;
    const size_t steps = r.steps.steps.size();
    const auto per_step = [&](KernelClass cls) {
        return u"%1 kernels, %2"_s.arg(to_qstring(present::per_step_rate(k.of(cls).count, steps, 0)),
            duration_text(static_cast<double>(present::per_step(k.of(cls).time_ns, steps))));
    };
    QLabel* caption = text_label(panel);
    QString text = u"Per step: FP8 GEMM %1; cast/quantize %2; amax/scale %3."_s.arg(
        per_step(KernelClass::Fp8Gemm), per_step(KernelClass::Cast), per_step(KernelClass::AmaxScale));
    if (k.of(KernelClass::FusedBookkeeping).count > 0)
        text += u" Fused bookkeeping %1, %2."_s.arg(
            per_step(KernelClass::FusedBookkeeping), to_qstring(present::fused_bookkeeping_attribution(k, steps)));
    caption->setText(text);
    layout->addWidget(caption);
    return panel;
}

// The tensor health summary: totals, events, and the worst site of each ranking.
QString tensor_health_html(const analyzer::TensorHealth& health)
{
    if (health.totals.samples == 0)
        return u"This trace has no tensor statistics: record with the collector's GEMM interception or the fp8scope "
               "Python package to see amax, saturation, underflow and headroom per tensor (docs/tensor-stats.md)."_s;
    QString html = u"<p>%1</p><table cellspacing='4'>"_s.arg(escaped(present::tensor_totals_sentence(health)));
    const auto row = [&](const QString& what, const QString& value) {
        html += u"<tr><td><b>%1</b></td><td>%2</td></tr>"_s.arg(what, value);
    };
    row(u"first NaN/Inf"_s, escaped(present::first_nonfinite_text(health, present::as_is)));
    for (const present::TensorEventKind kind : present::kTensorEventKinds)
        row(QString::fromLatin1(present::tensor_event_title(kind)),
            escaped(present::tensor_event_text(health, kind, present::as_is)));
    const auto top = [&](const QString& what, const std::vector<size_t>& ranking, auto figure) {
        if (ranking.empty())
            return;
        const analyzer::TensorSiteHealth& site = health.sites[ranking.front()];
        row(what, escaped(figure(site)) + u" — "_s + escaped(site.label));
    };
    top(u"most saturation"_s, health.top_saturation, present::worst_saturation_text);
    top(u"most underflow"_s, health.top_underflow, present::worst_underflow_text);
    top(u"least headroom"_s, health.top_least_headroom, present::min_headroom_text);
    return html + u"</table>"_s;
}

QGroupBox* group(const QString& title, QWidget* content, QWidget* parent)
{
    auto* box = new QGroupBox(title, parent);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(content);
    return box;
}

} // namespace

DashboardView::DashboardView(FindingsModel& findings, QWidget* parent)
    : QScrollArea(parent)
    , findings_model_(findings)
{
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    headline_ = text_label(page);
    headline_->setText(u"Open a trace with File ▸ Open, or start the viewer with fp8scope-gui TRACE [--ref REF]."_s);
    layout->addWidget(headline_);

    compare_box_ = new QGroupBox(u"Against the reference"_s, page);
    auto* compare_layout = new QHBoxLayout(compare_box_);
    auto* compare_text = new QVBoxLayout();
    verdict_ = text_label(compare_box_);
    compare_details_ = text_label(compare_box_);
    compare_text->addWidget(verdict_);
    compare_text->addWidget(compare_details_);
    compare_text->addStretch(1);
    performance_ = new QTableWidget(compare_box_);
    performance_->setColumnCount(4);
    performance_->setHorizontalHeaderLabels({ u""_s, u"run"_s, u"reference"_s, u"change"_s });
    performance_->verticalHeader()->hide();
    performance_->verticalHeader()->setDefaultSectionSize(performance_->fontMetrics().height() + 6);
    performance_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    performance_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    performance_->setSelectionMode(QAbstractItemView::NoSelection);
    performance_->setFocusPolicy(Qt::NoFocus);
    performance_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    performance_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    performance_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    performance_->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Maximum);
    compare_layout->addLayout(compare_text, 1);
    compare_layout->addWidget(performance_, 0, Qt::AlignTop);
    compare_box_->hide();
    layout->addWidget(compare_box_);

    // The dashboard lists the first divergent site, the loss and the recommendations; every drifting site is in the
    // Findings tab. Full width under the verdict: a finding reads whole beside its saving and its place.
    top_findings_ = new QSortFilterProxyModel(this);
    top_findings_->setSourceModel(&findings_model_);
    top_findings_->setFilterKeyColumn(FindingsModel::Kind);
    top_findings_->setFilterRegularExpression(QRegularExpression(u"^(?!scaling drift$)"_s));
    findings_ = new QTreeView(page);
    findings_->setModel(top_findings_);
    findings_->setRootIsDecorated(false);
    findings_->setUniformRowHeights(true);
    findings_->setItemDelegateForColumn(FindingsModel::Finding, new ElidingDelegate(Qt::ElideMiddle, findings_));
    findings_->header()->setStretchLastSection(false);
    connect(findings_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        Q_EMIT finding_activated(findings_model_.target(top_findings_->mapToSource(index).row()));
    });
    layout->addWidget(group(u"Top findings (click one to go to its step)"_s, findings_, page));

    // A BF16 run's FP8 what-if, full width (its table has nine columns); hidden for any other run.
    fp8_whatif_ = new Fp8WhatIfPanel(page);
    layout->addWidget(fp8_whatif_);

    // Two rows of two (boxes, not a grid: a grid's height for a width ignores the charts' minimum heights): the
    // bubble ratio and the idle time by cause, then the FP8 overhead (rebuild_charts()) and the tensor health.
    charts_rows_ = { new QHBoxLayout(), new QHBoxLayout() };
    for (QHBoxLayout* row : charts_rows_)
        layout->addLayout(row);
    tensor_health_ = text_label(page);
    charts_rows_[1]->addWidget(group(u"Tensor health"_s, tensor_health_, page), 1);
    layout->addStretch(1);

    setWidget(page);
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
}

void DashboardView::set_session(std::shared_ptr<const Session> session)
{
    session_ = std::move(session);
    if (!session_)
        return;
    const AnalysedTrace& run = *session_->run;
    headline_->setText(headline_html(run));
    // The numerics verdict of the FP8 tensors judged alone leads the box (docs/analysis.md "Numerics verdict").
    const analyzer::NumericsJudgement& numerics = run.report.numerics;
    const QString numerics_text = numerics.verdict == analyzer::NumericsVerdict::NoData
        ? QString()
        : u"<p style='color:%1'><b>Numerics %2</b></p>"_s.arg(
            numerics.verdict == analyzer::NumericsVerdict::Healthy ? u"#2ca02c"_s : attention_color().name(),
            escaped(present::numerics_summary(numerics, present::as_is)));
    tensor_health_->setText(numerics_text + tensor_health_html(run.report.tensor_health));
    fp8_whatif_->set_whatif(run.fp8_whatif);
    // Kind is told by colour here (red: numerics); Why is in the Findings view and the tooltips. The finding takes
    // the width that the saving and the place, read whole, leave.
    findings_->hideColumn(FindingsModel::Kind);
    findings_->hideColumn(FindingsModel::Why);
    QHeaderView& header = *findings_->header();
    header.setSectionResizeMode(FindingsModel::Finding, QHeaderView::Stretch);
    header.setSectionResizeMode(FindingsModel::Saving, QHeaderView::ResizeToContents);
    header.setSectionResizeMode(FindingsModel::Where, QHeaderView::ResizeToContents);
    // As tall as its rows, a handful (at least three rows' room, so that the box does not jump between traces).
    const int row_px = std::max(findings_->sizeHintForRow(0), findings_->fontMetrics().height() + 4);
    const int shown_rows = std::max(3, top_findings_->rowCount());
    findings_->setFixedHeight(header.sizeHint().height() + shown_rows * row_px + 2 * findings_->frameWidth());

    compare_box_->setVisible(session_->compare.has_value());
    if (session_->compare) {
        const analyzer::CompareResult& c = *session_->compare;
        const analyzer::CompareVerdict verdict = analyzer::default_compare_verdict(c);
        QString text;
        if (c.first_divergent) {
            const analyzer::CompareSite& first = c.sites[*c.first_divergent];
            text
                = u"<p style='font-size:large; color:%1'><b>%2</b></p>"
                  "<p>%3 drifting tensor(s) among %4 matched sites. <b>First divergent:</b> %5, %6<br><small>%7</small></p>"_s
                      .arg(attention_color().name(), escaped(present::drift_headline(c, present::as_is)))
                      .arg(c.flagged.size())
                      .arg(c.sites.size())
                      .arg(escaped(first.label), escaped(present::onset_text(first.onset_step)),
                          escaped(present::site_evidence_text(first)));
        } else {
            text = u"<p style='font-size:large; color:#2ca02c'><b>No site drifts</b> (%1 matched sites)</p>"_s.arg(
                c.sites.size());
        }
        text
            += u"<p style='color:%1'><b>%2</b></p>"_s.arg(verdict.loss.passed ? u"#2ca02c"_s : attention_color().name(),
                escaped(present::loss_sentence(c.loss, present::as_is)));
        verdict_->setText(text);
        QString pair;
        for (const present::PairLine& line : present::pair_lines(c.identity, present::as_is))
            pair += u"<b>%1:</b> %2<br>"_s.arg(escaped(line.label), escaped(line.text));
        compare_details_->setText(u"<p><small>"_s + pair
            + u"Reference: %1<br>%2<br>%3</small></p>"
              "<p><b>FP8's price:</b> %4; %5.<br><b>What would win it back</b> (per step): %6.</p>"_s.arg(
                  escaped(present::trace_sentence(session_->ref->model, session_->ref->report, present::as_is)),
                  escaped(present::alignment_sentence(c.alignment)), escaped(present::matching_sentence(c)),
                  escaped(present::fp8_price_sentence(c.performance)),
                  escaped(present::recording_cost_sentence(c.performance)),
                  escaped(present::fp8_recovery_sentence(c.performance))));
        const std::vector<present::PerformanceRow> rows
            = present::performance_rows(c.performance, c.identity.performance_only.empty());
        performance_->setRowCount(static_cast<int>(rows.size()));
        for (size_t i = 0; i < rows.size(); ++i) {
            const QString cells[] = { to_qstring(rows[i].what), to_qstring(rows[i].run), to_qstring(rows[i].ref),
                to_qstring(rows[i].change) };
            for (int column = 0; column < 4; ++column)
                performance_->setItem(static_cast<int>(i), column, new QTableWidgetItem(cells[column]));
        }
        performance_->resizeColumnsToContents();
        performance_->setFixedHeight(performance_->horizontalHeader()->height()
            + performance_->verticalHeader()->length() + 2 * performance_->frameWidth());
        performance_->setFixedWidth(performance_->verticalHeader()->width() + performance_->horizontalHeader()->length()
            + 2 * performance_->frameWidth());
    }
    rebuild_charts();
}

void DashboardView::rebuild_charts()
{
    // The three charts are made for each session (their series and axes depend on its steps and causes).
    for (QWidget* chart : charts_views_)
        delete chart;
    const analyzer::Report& r = session_->run->report;
    QWidget* page = widget();
    charts_views_ = { bubble_ratio_chart(r, page), idle_by_cause_chart(r, page), kernel_class_panel(r, page) };
    // Charts keep a readable height; the page scrolls instead of squeezing them.
    for (QWidget* chart : charts_views_)
        chart->setMinimumHeight(320);
    charts_rows_[0]->addWidget(charts_views_[0], 1);
    charts_rows_[0]->addWidget(charts_views_[1], 1);
    charts_rows_[1]->insertWidget(0, charts_views_[2], 1);
    // New children of a shown page stay hidden until shown, and a layout counts hidden widgets as nothing: show them
    // now, so that the page's height (and its scroll bar) is right from the first frame.
    for (QWidget* chart : charts_views_)
        chart->show();
}

} // namespace fp8scope::gui
