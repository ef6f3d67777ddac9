// The timeline's level-of-detail query (docs/analysis.md "Queries for the viewer"): folding counts and edges on lanes
// made in memory, with exact expected entries, and a check against a linear walk of the same rule on random lanes.
#include "fp8scope/analyzer/views/timeline.hpp"
#include "timeline_test_support.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;

namespace {

constexpr auto kOther = static_cast<uint8_t>(KernelClass::Other); // the class of a kernel named "kernel"

// One stream's kernels, back to back or as given, laid out by build_timeline.
struct Lane {
    TraceModel model = memory_model();
    TimelineIndex index;
    LaneRef ref;

    void build()
    {
        index = build_timeline(model, Report {});
        ref = { track_named(index, "GPU 0 · stream 7"), 0 };
    }
    std::vector<TimelineEntry> at(int64_t t0, int64_t t1, int width, double min_px = kFoldMinPx) const
    {
        return query(index, ref, t0, t1, width, min_px);
    }
};

// `count` kernels of `length_ns` each, back to back from 0.
Lane back_to_back(int count, int64_t length_ns)
{
    Lane lane;
    for (int i = 0; i < count; ++i)
        add_kernel(lane.model, i * length_ns, (i + 1) * length_ns);
    lane.build();
    return lane;
}

// The rule of query() (timeline.hpp) as a plain walk over every item: the reference the fast query must equal.
std::vector<TimelineEntry> linear_query(const TimelineLane& lane, int64_t t0, int64_t t1, int width, double min_px)
{
    std::vector<TimelineEntry> out;
    if (width <= 0 || t1 <= t0)
        return out;
    const double w = std::max(0.0, min_px) * (static_cast<double>(t1 - t0) / width);
    const auto visible
        = [&](size_t k) { return lane.start_ns[k] < t1 && (lane.end_ns[k] > t0 || lane.start_ns[k] >= t0); };
    const auto narrow = [&](size_t k) {
        return static_cast<double>(std::min(lane.end_ns[k], t1) - std::max(lane.start_ns[k], t0)) < w;
    };
    size_t i = 0;
    while (i < lane.size() && !visible(i))
        ++i;
    while (i < lane.size() && visible(i)) {
        size_t j = i + 1;
        if (narrow(i)) {
            const double s = static_cast<double>(std::max(lane.start_ns[i], t0));
            while (j < lane.size() && visible(j) && static_cast<double>(lane.start_ns[j]) < s + w)
                ++j;
            if (j - i > 1 && !narrow(j - 1))
                --j;
        }
        std::array<int64_t, kTimelineCategoryCount> time {};
        for (size_t k = i; k < j; ++k)
            time[lane.category[k]] += lane.end_ns[k] - lane.start_ns[k];
        uint8_t best = lane.category[i];
        for (size_t c = 0; c < time.size(); ++c)
            if (time[c] > time[best])
                best = static_cast<uint8_t>(c);
        out.push_back({ lane.start_ns[i], lane.end_ns[j - 1], static_cast<uint32_t>(i), static_cast<uint32_t>(j - i),
            best, lane.ref(i) });
        i = j;
    }
    return out;
}

bool same(const TimelineEntry& a, const TimelineEntry& b)
{
    return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.first == b.first && a.count == b.count
        && a.category == b.category && a.ref == b.ref;
}

} // namespace

TEST_CASE("timeline query: wide items come back one by one, with their own times", "[timeline]")
{
    Lane lane = back_to_back(10, 100); // [0, 1000)
    const auto entries = lane.at(0, 1000, 100); // 10 ns per px: w = 30 ns
    REQUIRE(entries.size() == 10);
    for (size_t i = 0; i < entries.size(); ++i) {
        CHECK_FALSE(entries[i].folded());
        CHECK(entries[i].start_ns == 100 * static_cast<int64_t>(i));
        CHECK(entries[i].end_ns == 100 * static_cast<int64_t>(i) + 100);
        CHECK(entries[i].ref == ItemRef { ItemKind::Kernel, static_cast<uint32_t>(i) });
        CHECK(entries[i].category == kOther);
    }
}

TEST_CASE("timeline query: runs of narrow items fold until the fold reaches min_px", "[timeline]")
{
    Lane lane = back_to_back(100, 10); // [0, 1000) in 10 ns kernels
    const auto entries = lane.at(0, 1000, 100); // w = 30 ns: items starting at s, s+10, s+20 fold
    REQUIRE(entries.size() == 34);
    for (size_t i = 0; i < 33; ++i) {
        INFO("entry " << i);
        CHECK(entries[i].count == 3);
        CHECK(entries[i].first == 3 * i);
        CHECK(entries[i].start_ns == 30 * static_cast<int64_t>(i));
        CHECK(entries[i].end_ns == 30 * static_cast<int64_t>(i) + 30);
    }
    // The 100th kernel has no neighbour within 30 ns of it: a lone narrow item, returned as itself.
    CHECK_FALSE(entries[33].folded());
    CHECK(entries[33].ref == ItemRef { ItemKind::Kernel, 99 });
}

TEST_CASE("timeline query: an item exactly min_px wide is not folded, one ns less is", "[timeline]")
{
    Lane lane;
    add_kernel(lane.model, 0, 30); // exactly 3 px at 10 ns per px
    add_kernel(lane.model, 100, 129); // 2.9 px
    add_kernel(lane.model, 129, 140); // starts before 100 + 30: folds with it
    lane.build();
    const auto entries = lane.at(0, 1000, 100);
    REQUIRE(entries.size() == 2);
    CHECK_FALSE(entries[0].folded());
    CHECK(entries[1].count == 2);
    CHECK(entries[1].start_ns == 100);
    CHECK(entries[1].end_ns == 140);
}

TEST_CASE("timeline query: a wide item at the end of a narrow run is drawn on its own", "[timeline]")
{
    Lane lane;
    add_kernel(lane.model, 0, 10);
    add_kernel(lane.model, 12, 20);
    add_kernel(lane.model, 25, 400); // starts within 30 ns of the fold's start, but is wide
    lane.build();
    const auto entries = lane.at(0, 1000, 100);
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].count == 2);
    CHECK(entries[0].end_ns == 20);
    CHECK_FALSE(entries[1].folded());
    CHECK(entries[1].ref.row == 2);
}

TEST_CASE("timeline query: window edges clip what counts as narrow, not the times returned", "[timeline]")
{
    Lane lane;
    add_kernel(lane.model, -1000, 5); // 5 ns inside the window: narrow
    add_kernel(lane.model, 10, 20); // starts within 30 ns of the window's start: folds with it
    add_kernel(lane.model, 500, 600);
    add_kernel(lane.model, 990, 5000); // 10 ns inside: narrow and alone
    add_kernel(lane.model, 6000, 7000); // after the window
    lane.build();
    const auto entries = lane.at(0, 1000, 100);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].count == 2);
    CHECK(entries[0].start_ns == -1000); // unclipped: the GUI clips
    CHECK(entries[0].end_ns == 20);
    CHECK(entries[1].ref.row == 2);
    CHECK_FALSE(entries[2].folded());
    CHECK(entries[2].start_ns == 990);
    CHECK(entries[2].end_ns == 5000);

    SECTION("an item wider than the window is one entry")
    {
        const auto inside = lane.at(1000, 2000, 100);
        REQUIRE(inside.size() == 1);
        CHECK(inside[0].ref.row == 3);
    }
    SECTION("an item ending exactly at t0 is not visible, one starting exactly at t1 neither")
    {
        const auto between = lane.at(20, 500, 100);
        CHECK(between.empty());
    }
}

TEST_CASE("timeline query: empty windows, width 0 and reversed windows give nothing", "[timeline]")
{
    Lane lane = back_to_back(10, 100);
    CHECK(lane.at(2000, 3000, 100).empty());
    CHECK(lane.at(-500, 0, 100).empty());
    CHECK(lane.at(0, 1000, 0).empty());
    CHECK(lane.at(0, 1000, -5).empty());
    CHECK(lane.at(500, 500, 100).empty());
    CHECK(lane.at(600, 500, 100).empty());
}

TEST_CASE("timeline query: zoom extremes", "[timeline]")
{
    Lane lane = back_to_back(1000, 10);
    SECTION("a 1 ns window shows the one item under it")
    {
        const auto entries = lane.at(4321, 4322, 1920);
        REQUIRE(entries.size() == 1);
        CHECK(entries[0].ref.row == 432);
        CHECK_FALSE(entries[0].folded());
    }
    SECTION("the whole trace in one pixel is one fold of every item")
    {
        const auto entries = lane.at(0, 10000, 1);
        REQUIRE(entries.size() == 1);
        CHECK(entries[0].count == 1000);
        CHECK(entries[0].start_ns == 0);
        CHECK(entries[0].end_ns == 10000);
    }
    SECTION("min_px 0 folds nothing")
    {
        CHECK(lane.at(0, 10000, 1, 0).size() == 1000);
    }
    SECTION("windows beyond int64's reach do not overflow")
    {
        const auto entries = lane.at(INT64_MIN, INT64_MAX, 1000);
        REQUIRE(entries.size() == 1);
        CHECK(entries[0].count == 1000);
    }
}

TEST_CASE("timeline query: zero-length items", "[timeline]")
{
    Lane lane;
    add_kernel(lane.model, 100, 100);
    add_kernel(lane.model, 100, 100);
    add_kernel(lane.model, 100, 200);
    add_kernel(lane.model, 300, 300);
    lane.build();
    SECTION("instants at the same time fold; an instant at t0 is visible")
    {
        const auto entries = lane.at(100, 1100, 1000, 3); // 1 ns per px: w = 3 ns
        REQUIRE(entries.size() == 3);
        CHECK(entries[0].count == 2);
        CHECK(entries[1].ref.row == 2);
        CHECK(entries[2].ref.row == 3);
    }
    SECTION("an instant at t1 is not")
    {
        const auto entries = lane.at(200, 300, 100);
        CHECK(entries.empty());
    }
}

TEST_CASE("timeline query: a fold carries the category with the most time", "[timeline]")
{
    Lane lane;
    add_memcpy(lane.model, 0, 5);
    add_kernel(lane.model, 5, 17); // 12 ns of kernel against 10 of memcpy
    add_memcpy(lane.model, 17, 22);
    lane.build();
    auto entries = lane.at(0, 1000, 100);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].count == 3);
    CHECK(entries[0].category == kOther);
    CHECK(entries[0].ref == ItemRef { ItemKind::Memcpy, 0 });

    SECTION("over many blocks of items")
    {
        Lane many;
        // 1,000 items: kernels of 1 ns, every third a memcpy of 3 ns, so memcpys hold more time.
        int64_t t = 0;
        for (int i = 0; i < 1000; ++i) {
            if (i % 3 == 0)
                add_memcpy(many.model, t, t + 3);
            else
                add_kernel(many.model, t, t + 1);
            t += 4;
        }
        many.build();
        entries = many.at(0, t, 1);
        REQUIRE(entries.size() == 1);
        CHECK(entries[0].count == 1000);
        CHECK(entries[0].category == kCategoryMemcpy);
    }
}

TEST_CASE("timeline query: equals a linear walk of the same rule on random lanes and windows", "[timeline]")
{
    std::mt19937_64 random(12);
    for (int trial = 0; trial < 20; ++trial) {
        Lane lane;
        int64_t t = 0;
        for (int i = 0; i < 3000; ++i) {
            // Gaps and lengths over four orders of magnitude, some zero.
            const int64_t gap = static_cast<int64_t>(random() % 4 == 0 ? random() % 2000 : random() % 4);
            const int64_t length = static_cast<int64_t>(random() % 5 == 0 ? random() % 5000 : random() % 6);
            t += gap;
            if (random() % 2 == 0)
                add_memcpy(lane.model, t, t + length);
            else
                add_kernel(lane.model, t, t + length);
            t += length;
        }
        lane.build();
        REQUIRE(lane.index.tracks[lane.ref.track].lanes.size() == 1);
        const TimelineLane& items = lane.index.lane(lane.ref);
        for (int window = 0; window < 50; ++window) {
            const int64_t a = static_cast<int64_t>(random() % static_cast<uint64_t>(t + 2)) - 1;
            const int64_t b = a + 1 + static_cast<int64_t>(random() % static_cast<uint64_t>(t - a + 2));
            const int width = static_cast<int>(random() % 2500);
            const double min_px = (random() % 4) * 1.5;
            const auto fast = lane.at(a, b, width, min_px);
            const auto slow = linear_query(items, a, b, width, min_px);
            INFO("trial " << trial << " window [" << a << ", " << b << ") width " << width << " min_px " << min_px);
            REQUIRE(fast.size() == slow.size());
            for (size_t i = 0; i < fast.size(); ++i) {
                INFO("entry " << i);
                REQUIRE(same(fast[i], slow[i]));
            }
        }
    }
}
