// reject_counters_test.cc: RejectCounters counts by (status, reason), copies reasons, and
// folds pairs beyond its table into (0, "other").
#include "gateway/server/reject_counters.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace portico::gateway::server {
namespace {

TEST(RejectCountersTest, CountsByStatusAndReason) {
  RejectCounters counters;
  counters.Count(400, "bare_lf");
  counters.Count(400, "bare_lf");
  counters.Count(502, "bare_lf");
  counters.Count(404, "");
  RejectTotals totals;
  counters.AddTo(&totals);
  EXPECT_EQ(totals,
            (RejectTotals{{{400, "bare_lf"}, 2}, {{502, "bare_lf"}, 1}, {{404, "unknown"}, 1}}));
  counters.AddTo(&totals);  // adds on top (the sum over workers)
  EXPECT_EQ((totals[{400, "bare_lf"}]), 4u);
}

TEST(RejectCountersTest, CopiesAndBoundsTheReason) {
  RejectCounters counters;
  {
    std::string reason(100, 'x');  // gone before the counters are read
    counters.Count(500, reason);
  }
  RejectTotals totals;
  counters.AddTo(&totals);
  EXPECT_EQ(totals, (RejectTotals{{{500, std::string(RejectCounters::kMaxReason, 'x')}, 1}}));
}

TEST(RejectCountersTest, PairsBeyondTheTableCountAsOther) {
  auto counters = std::make_unique<RejectCounters>();
  for (size_t i = 0; i < RejectCounters::kSlots + 10; ++i) {
    counters->Count(400, "reason_" + std::to_string(i));
  }
  counters->Count(400, "reason_0");  // an existing pair still counts as itself
  RejectTotals totals;
  counters->AddTo(&totals);
  EXPECT_EQ(totals.size(), RejectCounters::kSlots);  // kSlots - 1 pairs and "other"
  EXPECT_EQ((totals[{400, "reason_0"}]), 2u);
  EXPECT_EQ((totals[{0, "other"}]), 11u);
}

}  // namespace
}  // namespace portico::gateway::server
