// The timeline's rows: every lane of the analyzer's timeline index stacked top to bottom in the index's track order,
// each with its height and the label the gutter shows. Plain geometry with no widgets, so that the view, its hit
// testing and the render tests agree on where a lane is drawn.
#pragma once

#include "fp8scope/analyzer/views/timeline.hpp"

#include <QString>

#include <optional>
#include <vector>

namespace fp8scope::gui {

struct TimelineRow {
    analyzer::LaneRef lane;
    int y = 0; // top, in rows space (0 = the first row's top)
    int height = 0;
    QString label; // the track's name on its first lane, the lane's own label (an NVTX depth) on the others
    bool first_of_track = false;
};

class TimelineRows {
public:
    static constexpr int kRowHeight = 20;
    static constexpr int kTrackGap = 6; // space between two tracks

    TimelineRows() = default;
    explicit TimelineRows(const analyzer::TimelineIndex& index);

    const std::vector<TimelineRow>& rows() const { return rows_; }
    int height() const { return height_; }
    // The row at y (rows space), nullptr in a gap or outside.
    const TimelineRow* row_at(int y) const;
    // The row of a lane, nullptr when the index has no such lane.
    const TimelineRow* row_of(analyzer::LaneRef lane) const;
    // The first row of a track kind (for a device, when given), nullptr when none.
    const TimelineRow* first_row(analyzer::TrackKind kind, std::optional<uint32_t> device = std::nullopt) const;

private:
    std::vector<TimelineRow> rows_;
    std::vector<analyzer::TrackKind> kinds_; // per row
    std::vector<std::optional<uint32_t>> devices_; // per row
    int height_ = 0;
};

} // namespace fp8scope::gui
