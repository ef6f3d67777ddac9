#include "output/progress_bar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fp8scope::cli {

namespace {

// Below this many cells a bar says nothing a percentage does not; above the cap it only spreads out.
constexpr int kMinBarCells = 10;
constexpr int kMaxBarCells = 50;

} // namespace

std::string progress_line(std::string_view stage, double fraction, int columns)
{
    const int percent = static_cast<int>(std::floor(std::clamp(fraction, 0.0, 1.0) * 100.0));
    // The last column is left free: writing there makes some terminals wrap, and \r then returns to the wrong row.
    const int room = columns - 1;
    // stage + " [" + cells + "] " + "nnn%"
    const int cells = std::min(kMaxBarCells, room - static_cast<int>(stage.size()) - 8);
    if (cells < kMinBarCells) {
        std::string line = fmt::format("{} {}%", stage, percent);
        line.resize(std::min(line.size(), static_cast<size_t>(std::max(room, 0))));
        return line;
    }
    const int filled = cells * percent / 100;
    return fmt::format("{} [{}{}] {:>3}%", stage, std::string(filled, '#'), std::string(cells - filled, '.'), percent);
}

ProgressBar::ProgressBar(std::vector<ProgressStage> stages, ProgressTerminal terminal, ProgressTiming timing)
    : stages_(std::move(stages))
    , terminal_(std::move(terminal))
    , timing_(timing)
    , start_(terminal_.now())
{
    for (const auto& stage : stages_)
        total_weight_ += stage.weight;
}

ProgressBar::~ProgressBar()
{
    clear();
}

analyzer::ProgressHook ProgressBar::next_stage()
{
    if (next_stage_ >= stages_.size() || total_weight_ <= 0)
        return [](double) { return true; };
    const size_t stage = next_stage_++;
    const double from = next_from_ / total_weight_;
    const double share = stages_[stage].weight / total_weight_;
    next_from_ += stages_[stage].weight;
    report(stage, from); // the new stage's name shows at the next redraw even if its work never reports
    return [this, stage, from, share](double fraction) {
        report(stage, from + share * fraction);
        return true;
    };
}

void ProgressBar::report(size_t stage, double fraction)
{
    const std::lock_guard lock(mutex_);
    const std::chrono::nanoseconds now = terminal_.now();
    if (now - start_ < timing_.delay || (last_draw_ && now - *last_draw_ < timing_.interval))
        return;
    std::string line = progress_line(stages_[stage].name, fraction, terminal_.columns());
    if ((drawn_ && line == last_line_) || line.empty())
        return;
    last_draw_ = now;
    // \r, the line, then "erase to the end of the line" for what a longer earlier line left.
    terminal_.write(fmt::format("\r{}\x1b[K", line));
    last_line_ = std::move(line);
    drawn_ = true;
}

void ProgressBar::clear()
{
    const std::lock_guard lock(mutex_);
    if (!drawn_)
        return;
    terminal_.write(kProgressClear);
    drawn_ = false;
}

} // namespace fp8scope::cli
