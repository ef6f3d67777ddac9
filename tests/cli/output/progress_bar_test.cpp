// The progress bar's logic (cli/output/progress_bar.hpp) with a fake terminal: a clock the test moves, a width it sets,
// and every write kept. progress_terminal_test.cpp runs the real fp8scope with stderr on a pipe and on a terminal.
#include "output/progress_bar.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace fp8scope::cli;
using namespace std::literals;

namespace {

struct FakeTerminal {
    std::vector<std::string> writes;
    int columns = 80;
    std::chrono::nanoseconds now { 0 };

    ProgressTerminal terminal()
    {
        return { .write = [this](std::string_view bytes) { writes.emplace_back(bytes); },
            .columns = [this] { return columns; },
            .now = [this] { return now; } };
    }
};

// What a redraw writes: back to the first column, the line, erase what a longer line left.
std::string drawn(const std::string& line)
{
    return "\r" + line + "\x1b[K";
}

} // namespace

TEST_CASE("progress_line: stage, a bar of up to 50 cells and the percentage, within the width", "[cli][progress]")
{
    CHECK(progress_line("loading", 0.5, 80) == "loading [" + std::string(25, '#') + std::string(25, '.') + "]  50%");
    CHECK(progress_line("loading", 0.0, 80) == "loading [" + std::string(50, '.') + "]   0%");
    CHECK(progress_line("loading", 1.0, 80) == "loading [" + std::string(50, '#') + "] 100%");
    CHECK(progress_line("loading", 0.999, 80).ends_with("]  99%")); // 100% only when done
    // 40 columns: 39 characters, "analysing" (9) + 8 around a bar of 22 cells.
    const std::string narrow = progress_line("analysing", 0.5, 40);
    CHECK(narrow == "analysing [" + std::string(11, '#') + std::string(11, '.') + "]  50%");
    CHECK(narrow.size() == 39);
    // Too narrow for 10 cells: the words alone, cut to fit.
    CHECK(progress_line("loading the reference", 0.42, 30) == "loading the reference 42%");
    CHECK(progress_line("loading the reference", 0.42, 12) == "loading the");
    CHECK(progress_line("loading", 0.42, 1).empty());
    CHECK(progress_line("loading", 0.42, 0).empty());
}

TEST_CASE("progress bar: nothing at all before the work has run a second", "[cli][progress]")
{
    FakeTerminal fake;
    {
        ProgressBar bar({ { "loading", 1 } }, fake.terminal());
        const auto hook = bar.next_stage();
        for (int ms = 0; ms < 1000; ms += 10) {
            fake.now = std::chrono::milliseconds(ms);
            CHECK(hook(ms / 1000.0));
        }
        CHECK(fake.writes.empty());
    }
    CHECK(fake.writes.empty()); // and nothing to erase at the end
}

TEST_CASE("progress bar: drawn once the delay has passed, erased when done", "[cli][progress]")
{
    FakeTerminal fake;
    {
        ProgressBar bar({ { "loading", 1 } }, fake.terminal());
        const auto hook = bar.next_stage();
        fake.now = 1s;
        CHECK(hook(0.5));
        REQUIRE(fake.writes.size() == 1);
        CHECK(fake.writes[0] == drawn(progress_line("loading", 0.5, 80)));
    }
    REQUIRE(fake.writes.size() == 2);
    CHECK(fake.writes[1] == kProgressClear);
    CHECK(kProgressClear == "\r\x1b[K");
}

TEST_CASE("progress bar: at most one redraw per 100 ms, and none for an unchanged line", "[cli][progress]")
{
    FakeTerminal fake;
    ProgressBar bar({ { "loading", 1 } }, fake.terminal());
    const auto hook = bar.next_stage();
    // One report per millisecond from 1 s to 2 s, the fraction rising from 0 to 1: redraws at 1.0, 1.1, ..., 1.9 s.
    for (int ms = 1000; ms < 2000; ++ms) {
        fake.now = std::chrono::milliseconds(ms);
        hook((ms - 1000) / 1000.0);
    }
    REQUIRE(fake.writes.size() == 10);
    CHECK(fake.writes[0] == drawn(progress_line("loading", 0.0, 80)));
    CHECK(fake.writes[9] == drawn(progress_line("loading", 0.9, 80)));

    // The same percentage for another second: nothing to redraw.
    for (int ms = 2000; ms < 3000; ms += 5) {
        fake.now = std::chrono::milliseconds(ms);
        hook(0.999);
    }
    REQUIRE(fake.writes.size() == 11); // 99%, drawn once
    CHECK(fake.writes[10] == drawn(progress_line("loading", 0.999, 80)));
}

TEST_CASE("progress bar: stages are laid end to end by weight, each named while it runs", "[cli][progress]")
{
    FakeTerminal fake;
    ProgressBar bar({ { "loading", 3 }, { "analysing", 1 } }, fake.terminal(), { .delay = 0ns, .interval = 100ms });
    const auto load = bar.next_stage(); // draws "loading 0%" at once: no delay here
    REQUIRE(fake.writes.size() == 1);
    CHECK(fake.writes[0] == drawn(progress_line("loading", 0.0, 80)));
    fake.now = 100ms;
    load(1.0);
    CHECK(fake.writes.back() == drawn(progress_line("loading", 0.75, 80)));
    fake.now = 200ms;
    const auto analyse = bar.next_stage();
    CHECK(fake.writes.back() == drawn(progress_line("analysing", 0.75, 80)));
    fake.now = 300ms;
    analyse(0.5);
    CHECK(fake.writes.back() == drawn(progress_line("analysing", 0.875, 80)));
    CHECK(fake.writes.size() == 4);
    // A stage beyond those given is a no-op hook.
    CHECK(bar.next_stage()(0.5));
    CHECK(fake.writes.size() == 4);
}

TEST_CASE("progress bar: every line fits the terminal's width as it is at each redraw", "[cli][progress]")
{
    FakeTerminal fake;
    ProgressBar bar({ { "analysing the reference", 1 } }, fake.terminal(), { .delay = 0ns, .interval = 0ns });
    const auto hook = bar.next_stage();
    for (const int columns : { 120, 60, 40, 33, 20, 5 }) {
        fake.columns = columns;
        fake.now += 1ms;
        hook(columns / 200.0);
        const std::string& write = fake.writes.back();
        REQUIRE(write.starts_with("\r"));
        REQUIRE(write.ends_with("\x1b[K"));
        const size_t line_size = write.size() - 4;
        INFO(write);
        CHECK(static_cast<int>(line_size) <= columns - 1);
        CHECK(write.find("analysing"sv.substr(0, std::min(columns - 1, 9))) == 1);
    }
    CHECK(fake.writes.size() == 7); // the stage's first draw at 80 columns, then one per width
    fake.columns = 1; // no room for even a character: nothing drawn
    fake.now += 1ms;
    hook(0.9);
    CHECK(fake.writes.size() == 7);
}

TEST_CASE("progress bar: clear() erases a drawn line once, and the next report draws it again", "[cli][progress]")
{
    FakeTerminal fake;
    ProgressBar bar({ { "loading", 1 } }, fake.terminal(), { .delay = 0ns, .interval = 100ms });
    bar.clear(); // nothing drawn yet
    CHECK(fake.writes.empty());
    const auto hook = bar.next_stage();
    REQUIRE(fake.writes.size() == 1);
    bar.clear();
    bar.clear();
    REQUIRE(fake.writes.size() == 2);
    CHECK(fake.writes[1] == kProgressClear);
    // After a message the same line comes back, once the interval allows a redraw.
    fake.now = 50ms;
    hook(0.0);
    CHECK(fake.writes.size() == 2);
    fake.now = 100ms;
    hook(0.0);
    REQUIRE(fake.writes.size() == 3);
    CHECK(fake.writes[2] == drawn(progress_line("loading", 0.0, 80)));
}
