#include "models/timeline_rows.hpp"

#include "models/display_text.hpp"

#include <algorithm>

namespace fp8scope::gui {

TimelineRows::TimelineRows(const analyzer::TimelineIndex& index)
{
    int y = 0;
    for (uint32_t t = 0; t < index.tracks.size(); ++t) {
        const analyzer::TimelineTrack& track = index.tracks[t];
        if (t > 0)
            y += kTrackGap;
        for (uint32_t l = 0; l < track.lanes.size(); ++l) {
            const analyzer::TimelineLane& lane = track.lanes[l];
            rows_.push_back(TimelineRow { .lane = { t, l },
                .y = y,
                .height = kRowHeight,
                .label = to_qstring(l == 0 ? std::string_view(track.name) : std::string_view(lane.label)),
                .first_of_track = l == 0 });
            kinds_.push_back(track.kind);
            devices_.push_back(track.device_id);
            y += kRowHeight;
        }
    }
    height_ = y;
}

const TimelineRow* TimelineRows::row_at(int y) const
{
    const auto it = std::ranges::upper_bound(rows_, y, {}, &TimelineRow::y);
    if (it == rows_.begin())
        return nullptr;
    const TimelineRow& row = *std::prev(it);
    return y < row.y + row.height ? &row : nullptr;
}

const TimelineRow* TimelineRows::row_of(analyzer::LaneRef lane) const
{
    const auto it = std::ranges::find(rows_, lane, &TimelineRow::lane);
    return it == rows_.end() ? nullptr : &*it;
}

const TimelineRow* TimelineRows::first_row(analyzer::TrackKind kind, std::optional<uint32_t> device) const
{
    for (size_t i = 0; i < rows_.size(); ++i)
        if (kinds_[i] == kind && (!device || devices_[i] == device))
            return &rows_[i];
    return nullptr;
}

} // namespace fp8scope::gui
