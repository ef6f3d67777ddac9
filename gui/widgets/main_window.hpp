// The viewer's window: File menu (Open, Open reference), one tab per view, a message banner for problems, and a
// status bar with the background load's progress and Cancel. It owns the session loader, the shared view state and
// the models, hands every new session to them, and wires the views to the view state; it computes nothing.
#pragma once

#include "models/findings_model.hpp"
#include "models/kernels_model.hpp"
#include "models/session_loader.hpp"
#include "models/steps_model.hpp"
#include "models/tensor_sites_model.hpp"
#include "models/view_state.hpp"

#include <QMainWindow>

#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace fp8scope::gui {

class DashboardView;
class FindingsView;
class KernelsView;
class TensorsView;
class TimelineView;
class MessageBanner;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads a trace (and its reference) in the background; the current session stays until it is ready.
    void open(const QString& run_path, const QString& ref_path = {});
    void open_reference(const QString& ref_path);

    std::shared_ptr<const Session> session() const { return session_; }
    // The run's timeline index; null until it is built (after the session is shown).
    std::shared_ptr<const SessionTimeline> timeline() const { return timeline_; }
    SessionLoader& loader() { return *loader_; }
    ViewState& view_state() { return *view_state_; }
    QTabWidget& tabs() { return *tabs_; }
    // The problem or warning shown in the banner, empty when none is shown.
    QString banner_text() const;

Q_SIGNALS:
    // A request is settled: a new session is shown (changed == true; its timeline may still be building), or it
    // failed or was cancelled and the old session stays (changed == false).
    void load_settled(bool changed);
    // The background job is over: the timeline of the session shown is built, or will not be (failure, cancel).
    void job_finished();

private:
    void build_menus();
    void build_status_bar();
    void on_loaded(std::shared_ptr<const Session> session, const QString& warning);
    void on_failed(const QString& message);
    void on_timeline(std::shared_ptr<const SessionTimeline> timeline);
    void show_progress(bool busy);
    void choose_trace();
    void choose_reference();
    // Moves the view state to where a finding points; `show` also brings its view to the front (the timeline, or the
    // tensors for a drifting site).
    void go_to_finding(const FindingTarget& target, bool show);
    void update_title();

    SessionLoader* loader_;
    ViewState* view_state_;
    FindingsModel* findings_model_;
    StepsModel* steps_model_;
    KernelsModel* kernels_model_;
    TensorSitesModel* sites_model_;
    std::shared_ptr<const Session> session_;
    std::shared_ptr<const SessionTimeline> timeline_;

    MessageBanner* banner_;
    QTabWidget* tabs_;
    DashboardView* dashboard_;
    FindingsView* findings_;
    TimelineView* timeline_view_;
    KernelsView* kernels_;
    TensorsView* tensors_;
    QProgressBar* progress_;
    QLabel* progress_label_;
    QPushButton* cancel_;
    QAction* open_reference_action_ = nullptr;
};

} // namespace fp8scope::gui
