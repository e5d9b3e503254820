// Broadcasting over static shapes (include/graphlint/ir/Broadcast.h), shared
// by ir's small-tensor evaluator and the verify pass's reference kernels.
#include "graphlint/ir/Broadcast.h"

#include <gtest/gtest.h>

#include <utility>

using namespace graphlint;

using Ints = std::vector<int64_t>;

TEST(Broadcast, ShapesAlignOnTheRightAndStretchOnes) {
  Ints a = {4, 1, 3}, b = {2, 1}, c = {5}, d = {};
  EXPECT_EQ(broadcastShapes({&a, &b}), Ints({4, 2, 3}));
  EXPECT_EQ(broadcastShapes({&a, &d}), a) << "a scalar broadcasts to anything";
  EXPECT_EQ(broadcastShapes({&a, &c}), std::nullopt) << "3 against 5";
}

TEST(Broadcast, StridesAreZeroAlongBroadcastDimsAndAbsentWhenItDoesNotFit) {
  EXPECT_EQ(broadcastStrides({3, 1}, {2, 3, 4}), Ints({0, 1, 0}));
  EXPECT_EQ(broadcastStrides({2, 3, 4}, {2, 3, 4}), Ints({12, 4, 1}));
  EXPECT_EQ(broadcastStrides({3, 2}, {2, 3, 4}), std::nullopt) << "2 against 4";
  EXPECT_EQ(broadcastStrides({1, 2, 3, 4}, {2, 3, 4}), std::nullopt) << "more dims than the output";
}

TEST(Broadcast, EveryElementIsVisitedWithEachOperandsOffset) {
  Ints out = {2, 3};
  std::vector<Ints> strides = {*broadcastStrides({2, 1}, out), *broadcastStrides({3}, out)};
  std::vector<std::pair<int64_t, int64_t>> seen;
  int64_t next = 0;
  forEachBroadcast(out, strides, [&](int64_t i, const std::vector<int64_t> &off) {
    EXPECT_EQ(i, next++);
    seen.push_back({off[0], off[1]});
  });
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
  int64_t calls = 0;
  forEachBroadcast({int64_t{1} << 40, int64_t{1} << 40}, {}, [&](int64_t, const std::vector<int64_t> &) { ++calls; });
  EXPECT_EQ(calls, 0) << "an element count that overflows visits nothing";
  EXPECT_EQ(elementCount({-1, 2}), std::nullopt);
}
