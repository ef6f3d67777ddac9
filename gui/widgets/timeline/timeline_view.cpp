#include "widgets/timeline/timeline_view.hpp"

#include "widgets/timeline/timeline_canvas.hpp"

#include "models/display_text.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

namespace {

QString swatch(const QColor& color, const QString& name)
{
    return u"<span style='color:%1'>■</span>&nbsp;%2"_s.arg(color.name(), name.toHtmlEscaped());
}

// The colours the canvas uses, in one line: bubble causes, then kernel classes and copies.
QString legend_html()
{
    QString causes;
    for (size_t c = 0; c < analyzer::kBubbleCauseCount; ++c)
        causes += swatch(cause_color(static_cast<analyzer::BubbleCause>(c)),
                      cause_name(static_cast<analyzer::BubbleCause>(c)))
            + u"&nbsp;&nbsp;"_s;
    QString classes;
    for (uint8_t c = 0; c < analyzer::kTimelineCategoryCount; ++c)
        classes += swatch(timeline_color(analyzer::TrackKind::GpuStream, c),
                       to_qstring(analyzer::timeline_category_name(analyzer::TrackKind::GpuStream, c)))
            + u"&nbsp;&nbsp;"_s;
    return u"<b>Bubbles</b> by cause: %1 &nbsp;│&nbsp; <b>GPU work</b>: %2 &nbsp;│&nbsp; hatched: folded items"_s.arg(
        causes, classes);
}

QToolButton* tool_button(const QString& text, const QString& tip, QWidget* parent)
{
    auto* button = new QToolButton(parent);
    button->setText(text);
    button->setToolTip(tip);
    button->setAutoRaise(true);
    return button;
}

} // namespace

TimelineView::TimelineView(ViewState& state, StepsModel& steps, QWidget* parent)
    : QWidget(parent)
    , state_(state)
    , steps_(steps)
    , navigator_(new QComboBox(this))
    , legend_(new QLabel(this))
    , canvas_(new TimelineCanvas(state, this))
    , scroll_(new QScrollBar(Qt::Vertical, this))
    , details_title_(new QLabel(this))
    , details_(new QTreeWidget(this))
{
    // The navigator's list is a table of the steps with their figures: pick the slow or idle one.
    auto* steps_table = new QTableView(navigator_);
    steps_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    steps_table->verticalHeader()->hide();
    steps_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    steps_table->setMinimumWidth(560);
    navigator_->setModel(&steps_);
    navigator_->setView(steps_table);
    navigator_->setModelColumn(StepsModel::Step);
    navigator_->setMinimumContentsLength(12);
    navigator_->setPlaceholderText(u"(none)"_s);
    connect(&steps_, &QAbstractItemModel::modelReset, this, [this] { navigator_->setCurrentIndex(-1); });
    navigator_->setToolTip(u"Show one step (PageUp/PageDown: the previous/next step)"_s);
    connect(navigator_, &QComboBox::activated, this, [this](int row) {
        state_.focus_step(
            steps_.data(steps_.index(row, 0), StepsModel::kStepIndexRole).toLongLong(), state_.highlighted_cause());
        canvas_->setFocus();
    });
    QToolButton* previous = tool_button(u"◀"_s, u"Previous step (PageUp)"_s, this);
    QToolButton* next = tool_button(u"▶"_s, u"Next step (PageDown)"_s, this);
    QToolButton* whole = tool_button(u"Whole trace"_s, u"Show the whole trace (Home)"_s, this);
    connect(previous, &QToolButton::clicked, this, [this] { state_.focus_adjacent_step(-1); });
    connect(next, &QToolButton::clicked, this, [this] { state_.focus_adjacent_step(+1); });
    connect(whole, &QToolButton::clicked, this, [this] { state_.set_window(state_.bounds()); });
    auto* hint = new QLabel(u"Wheel: zoom · drag: pan · Shift+wheel: scroll tracks · W/S/A/D or arrows · "
                            "double-click: zoom to item · hover GPU work: its launch"_s,
        this);
    hint->setForegroundRole(QPalette::PlaceholderText);

    auto* bar = new QHBoxLayout();
    bar->addWidget(new QLabel(u"Step:"_s, this));
    bar->addWidget(navigator_);
    bar->addWidget(previous);
    bar->addWidget(next);
    bar->addWidget(whole);
    bar->addSpacing(12);
    bar->addWidget(hint, 1);

    legend_->setTextFormat(Qt::RichText);
    legend_->setText(legend_html());
    legend_->setWordWrap(true);

    auto* plot = new QWidget(this);
    auto* plot_layout = new QHBoxLayout(plot);
    plot_layout->setContentsMargins(0, 0, 0, 0);
    plot_layout->setSpacing(0);
    plot_layout->addWidget(canvas_, 1);
    plot_layout->addWidget(scroll_);
    connect(canvas_, &TimelineCanvas::vertical_range_changed, this, [this](int content, int page) {
        scroll_->setRange(0, std::max(0, content - page + TimelineRows::kRowHeight));
        scroll_->setPageStep(page);
        scroll_->setSingleStep(TimelineRows::kRowHeight);
    });
    connect(canvas_, &TimelineCanvas::vertical_offset_changed, scroll_, &QScrollBar::setValue);
    connect(scroll_, &QScrollBar::valueChanged, canvas_, &TimelineCanvas::set_vertical_offset);

    auto* details = new QWidget(this);
    auto* details_layout = new QVBoxLayout(details);
    details_layout->setContentsMargins(6, 0, 0, 0);
    details_title_->setWordWrap(true);
    details_title_->setTextFormat(Qt::PlainText);
    details_title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = details_title_->font();
    bold.setBold(true);
    details_title_->setFont(bold);
    details_title_->setText(u"Click an item to see its details"_s);
    details_->setColumnCount(2);
    details_->setHeaderLabels({ u"Field"_s, u"Value"_s });
    details_->setRootIsDecorated(false);
    details_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    details_layout->addWidget(details_title_);
    details_layout->addWidget(details_, 1);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(plot);
    splitter->addWidget(details);
    splitter->setStretchFactor(0, 1);
    splitter->setSizes({ 1100, 300 });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(legend_);
    layout->addWidget(splitter, 1);

    // The keys (zoom, pan, steps) work as soon as the tab is shown, without a click into the canvas first.
    setFocusProxy(canvas_);
    connect(canvas_, &TimelineCanvas::item_selected, this, &TimelineView::show_details);
    connect(&state_, &ViewState::focus_changed, this,
        [this](std::optional<int64_t> step, std::optional<analyzer::BubbleCause>) { sync_navigator(step); });
}

void TimelineView::set_data(std::shared_ptr<const Session> session, std::shared_ptr<const SessionTimeline> timeline)
{
    timeline_ = timeline;
    canvas_->set_data(std::move(session), std::move(timeline));
    show_details(std::nullopt);
}

void TimelineView::sync_navigator(std::optional<int64_t> step_index)
{
    navigator_->setCurrentIndex(step_index ? steps_.row_of_step(*step_index) : -1);
}

void TimelineView::show_details(std::optional<analyzer::ItemRef> item)
{
    details_->clear();
    if (!item || !timeline_) {
        details_title_->setText(u"Click an item to see its details"_s);
        return;
    }
    const AnalysedTrace& run = *timeline_->run;
    const analyzer::ItemDetails details = analyzer::describe_item(timeline_->index, run.model, run.report, *item);
    details_title_->setText(to_qstring(details.title));
    for (const analyzer::DetailField& field : details.fields) {
        auto* row = new QTreeWidgetItem(details_, { to_qstring(field.label), detail_value(field) });
        row->setToolTip(1, row->text(1));
    }
}

} // namespace fp8scope::gui
