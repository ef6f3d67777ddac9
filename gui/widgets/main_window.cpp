#include "widgets/main_window.hpp"

#include "widgets/dashboard_view.hpp"
#include "widgets/findings_view.hpp"
#include "widgets/kernels_view.hpp"
#include "widgets/message_banner.hpp"
#include "widgets/tensors_view.hpp"
#include "widgets/timeline/timeline_view.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

namespace fp8scope::gui {

using namespace Qt::StringLiterals;

namespace {

const QString kTraceFilter = u"fp8scope or Nsight Systems SQLite traces (*.sqlite *.db);;All files (*)"_s;

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , loader_(new SessionLoader(this))
    , view_state_(new ViewState(this))
    , findings_model_(new FindingsModel(this))
    , steps_model_(new StepsModel(this))
    , kernels_model_(new KernelsModel(this))
    , sites_model_(new TensorSitesModel(this))
    , banner_(new MessageBanner(this))
    , tabs_(new QTabWidget(this))
    , dashboard_(new DashboardView(*findings_model_, this))
    , findings_(new FindingsView(*findings_model_, this))
    , timeline_view_(new TimelineView(*view_state_, *steps_model_, this))
    , kernels_(new KernelsView(*kernels_model_, this))
    , tensors_(new TensorsView(*sites_model_, *view_state_, this))
    , progress_(new QProgressBar(this))
    , progress_label_(new QLabel(this))
    , cancel_(new QPushButton(u"Cancel"_s, this))
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(banner_);
    layout->addWidget(tabs_, 1);
    setCentralWidget(central);

    tabs_->setDocumentMode(true);
    tabs_->addTab(dashboard_, u"Dashboard"_s);
    tabs_->addTab(timeline_view_, u"Timeline"_s);
    tabs_->addTab(findings_, u"Findings"_s);
    tabs_->addTab(kernels_, u"Kernels"_s);
    tabs_->addTab(tensors_, u"Tensors"_s);

    build_menus();
    build_status_bar();

    connect(loader_, &SessionLoader::loaded, this, &MainWindow::on_loaded);
    connect(loader_, &SessionLoader::failed, this, &MainWindow::on_failed);
    connect(loader_, &SessionLoader::timeline_ready, this, &MainWindow::on_timeline);
    connect(loader_, &SessionLoader::canceled, this, [this] {
        statusBar()->showMessage(u"Loading canceled"_s, 5000);
        Q_EMIT load_settled(false);
    });
    connect(loader_, &SessionLoader::finished, this, [this] {
        show_progress(false);
        Q_EMIT job_finished();
    });
    connect(loader_, &SessionLoader::progress, this, [this](int value, const QString& stage) {
        progress_->setValue(value);
        progress_label_->setText(stage);
    });
    connect(findings_, &FindingsView::finding_selected, this,
        [this](const FindingTarget& target) { go_to_finding(target, false); });
    connect(findings_, &FindingsView::finding_activated, this,
        [this](const FindingTarget& target) { go_to_finding(target, true); });
    connect(dashboard_, &DashboardView::finding_activated, this,
        [this](const FindingTarget& target) { go_to_finding(target, true); });

    resize(1400, 900);
    update_title();
}

MainWindow::~MainWindow() = default;

void MainWindow::build_menus()
{
    QMenu* file = menuBar()->addMenu(u"&File"_s);
    QAction* open = file->addAction(u"&Open…"_s, this, &MainWindow::choose_trace);
    open->setShortcut(QKeySequence::Open);
    open_reference_action_ = file->addAction(u"Open &reference…"_s, this, &MainWindow::choose_reference);
    open_reference_action_->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_O);
    open_reference_action_->setEnabled(false);
    file->addSeparator();
    QAction* quit = file->addAction(u"&Quit"_s, this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::build_status_bar()
{
    progress_->setRange(0, SessionLoader::kProgressMax);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(240);
    cancel_->setToolTip(u"Stop loading; the current trace stays open"_s);
    connect(cancel_, &QPushButton::clicked, loader_, &SessionLoader::cancel);
    statusBar()->addPermanentWidget(progress_label_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    show_progress(false);
}

void MainWindow::show_progress(bool busy)
{
    progress_->setVisible(busy);
    progress_label_->setVisible(busy);
    cancel_->setVisible(busy);
    if (busy) {
        progress_->setValue(0);
        progress_label_->clear();
    }
}

void MainWindow::open(const QString& run_path, const QString& ref_path)
{
    show_progress(true);
    loader_->open(run_path, ref_path);
}

void MainWindow::open_reference(const QString& ref_path)
{
    show_progress(true);
    loader_->open_reference(session_, ref_path);
}

void MainWindow::choose_trace()
{
    const QString path = QFileDialog::getOpenFileName(this, u"Open a trace"_s, {}, kTraceFilter);
    if (!path.isEmpty())
        open(path);
}

void MainWindow::choose_reference()
{
    const QString path = QFileDialog::getOpenFileName(this, u"Open a reference run (e.g. BF16)"_s, {}, kTraceFilter);
    if (!path.isEmpty())
        open_reference(path);
}

void MainWindow::on_loaded(std::shared_ptr<const Session> session, const QString& warning)
{
    // A new reference keeps the run, and with it the run's timeline; a new run's timeline comes next.
    if (!session_ || session->run != session_->run)
        timeline_.reset();
    session_ = std::move(session);
    const analyzer::TraceModel& model = session_->run->model;
    const auto span = model.time_span_ns().value_or(std::pair<int64_t, int64_t> { 0, 1 });
    view_state_->reset(TimeWindow { span.first, span.second }, session_->run->report.steps.steps);
    findings_model_->set_session(session_);
    steps_model_->set_session(session_);
    kernels_model_->set_session(session_);
    kernels_->set_session(session_);
    sites_model_->set_session(session_);
    tensors_->set_session(session_);
    dashboard_->set_session(session_);
    timeline_view_->set_data(session_, timeline_);
    open_reference_action_->setEnabled(true);
    if (warning.isEmpty())
        banner_->hide();
    else
        banner_->show_message(MessageBanner::Kind::Warning, warning);
    update_title();
    Q_EMIT load_settled(true);
}

void MainWindow::on_failed(const QString& message)
{
    banner_->show_message(MessageBanner::Kind::Error, message);
    Q_EMIT load_settled(false);
}

void MainWindow::on_timeline(std::shared_ptr<const SessionTimeline> timeline)
{
    if (!session_ || timeline->run != session_->run)
        return;
    timeline_ = std::move(timeline);
    timeline_view_->set_data(session_, timeline_);
}

void MainWindow::go_to_finding(const FindingTarget& target, bool show)
{
    if (target.run_site_id)
        view_state_->select_site(target.run_site_id);
    if (target.step)
        view_state_->focus_step(*target.step, target.cause);
    if (show)
        tabs_->setCurrentWidget(target.run_site_id ? static_cast<QWidget*>(tensors_) : timeline_view_);
}

void MainWindow::update_title()
{
    if (!session_) {
        setWindowTitle(u"fp8scope"_s);
        return;
    }
    QString title = QFileInfo(QString::fromStdString(session_->run->model.path)).fileName();
    if (session_->ref)
        title += u" against "_s + QFileInfo(QString::fromStdString(session_->ref->model.path)).fileName();
    setWindowTitle(title + u" — fp8scope"_s);
}

QString MainWindow::banner_text() const
{
    return banner_->text();
}

} // namespace fp8scope::gui
