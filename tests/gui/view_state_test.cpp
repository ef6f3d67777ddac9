// The shared view state (gui/models/view_state.hpp): a reset shows the whole trace, focusing a step shows it with a
// margin and says which cause to highlight, the step navigator's next/previous, and clamping.
#include "models/view_state.hpp"

#include <QSignalSpy>
#include <catch2/catch.hpp>

using namespace fp8scope;
using gui::TimeWindow;
using gui::ViewState;

namespace {

std::vector<analyzer::StepInterval> three_steps()
{
    return { { 2, 1'000, 2'000 }, { 3, 2'000, 3'000 }, { 4, 3'000, 5'000 } };
}

} // namespace

TEST_CASE("view state: a reset shows the whole trace and clears the focus", "[gui][view_state]")
{
    ViewState state;
    QSignalSpy window(&state, &ViewState::window_changed);
    state.reset({ 0, 6'000 }, three_steps());
    CHECK(state.window() == TimeWindow { 0, 6'000 });
    CHECK(window.count() == 1);
    state.focus_step(3, analyzer::BubbleCause::Sync);
    state.reset({ 0, 7'000 }, three_steps());
    CHECK_FALSE(state.focused_step());
    CHECK_FALSE(state.highlighted_cause());
    CHECK(state.window() == TimeWindow { 0, 7'000 });
}

TEST_CASE("view state: focusing a step shows it with 5% either side and the cause", "[gui][view_state]")
{
    ViewState state;
    state.reset({ 0, 6'000 }, three_steps());
    QSignalSpy focus(&state, &ViewState::focus_changed);
    state.focus_step(4, analyzer::BubbleCause::Launch);
    CHECK(state.window() == TimeWindow { 2'900, 5'100 });
    CHECK(state.focused_step() == 4);
    CHECK(state.highlighted_cause() == analyzer::BubbleCause::Launch);
    CHECK(focus.count() == 1);
    // A step the trace does not have changes nothing.
    state.focus_step(99);
    CHECK(state.focused_step() == 4);
    CHECK(focus.count() == 1);
}

TEST_CASE("view state: next and previous step stop at the ends", "[gui][view_state]")
{
    ViewState state;
    state.reset({ 0, 6'000 }, three_steps());
    state.focus_adjacent_step(+1); // nothing focused: the first step
    CHECK(state.focused_step() == 2);
    state.focus_adjacent_step(-1);
    CHECK(state.focused_step() == 2);
    state.focus_adjacent_step(+1);
    state.focus_adjacent_step(+1);
    state.focus_adjacent_step(+1);
    CHECK(state.focused_step() == 4);
    ViewState other;
    other.reset({ 0, 6'000 }, three_steps());
    other.focus_adjacent_step(-1); // nothing focused: the last step
    CHECK(other.focused_step() == 4);
}

TEST_CASE("view state: windows are clamped to the trace", "[gui][view_state]")
{
    ViewState state;
    state.reset({ 1'000, 6'000 }, three_steps());
    state.set_window({ -50, 9'000 });
    CHECK(state.window() == TimeWindow { 1'000, 6'000 });
    state.set_window({ 2'000, 1'000 }); // reversed: one ns at its start
    CHECK(state.window() == TimeWindow { 2'000, 2'001 });
    QSignalSpy site(&state, &ViewState::site_selected);
    state.select_site(17);
    state.select_site(17);
    CHECK(site.count() == 1);
    CHECK(state.selected_site() == 17);
}
