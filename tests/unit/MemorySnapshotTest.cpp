// The pickle writer (protocol 2 opcodes, byte for byte) and the predicted
// memory snapshot (--emit-memory-snapshot): its device trace replays to the
// memory plan's peak allocated, its segments add up to the peak reserved,
// and every segment's blocks tile it. tests/viewers/memory_snapshot_test.py
// loads the same files with pickle and torch.cuda._memory_viz.
#include "TestSupport.h"

#include "graphlint/report/Pickle.h"
#include "graphlint/report/Reporters.h"

#include <gtest/gtest.h>

#include <map>

using namespace graphlint;
using graphlint::test::sourcePath;

namespace {

std::string pickled(const std::function<void(PickleWriter &)> &write) {
  std::string s;
  llvm::raw_string_ostream os(s);
  PickleWriter w(os);
  write(w);
  w.finish();
  os.flush();
  return s;
}

// pickle.dumps(v, protocol=2) spells these the same way, less its memo (PUT).
TEST(PickleWriter, WritesProtocolTwoOpcodes) {
  EXPECT_EQ(pickled([](PickleWriter &w) { w.integer(7); }), std::string("\x80\x02K\x07.", 5));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.integer(300); }), std::string("\x80\x02M\x2c\x01.", 6));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.integer(-1); }), std::string("\x80\x02J\xff\xff\xff\xff.", 8));
  // 2**40: LONG1 with 6 bytes; 2**63: 9 bytes, the last 0 keeping it positive.
  EXPECT_EQ(pickled([](PickleWriter &w) { w.integer(int64_t(1) << 40); }),
            std::string("\x80\x02\x8a\x06\x00\x00\x00\x00\x00\x01.", 11));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.unsignedInteger(uint64_t(1) << 63); }),
            std::string("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.", 14));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.integer(-(int64_t(1) << 40)); }),
            std::string("\x80\x02\x8a\x06\x00\x00\x00\x00\x00\xff.", 11));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.str("ab"); }), std::string("\x80\x02X\x02\x00\x00\x00" "ab.", 10));
  EXPECT_EQ(pickled([](PickleWriter &w) { w.real(1.5); }),
            std::string("\x80\x02G\x3f\xf8\x00\x00\x00\x00\x00\x00.", 12));
  EXPECT_EQ(pickled([](PickleWriter &w) {
              w.beginDict();
              w.key("a");
              w.beginList();
              w.boolean(true);
              w.none();
              w.end();
              w.end();
            }),
            std::string("\x80\x02}(X\x01\x00\x00\x00" "a](\x88" "Neu.", 17));
  EXPECT_EQ(pickled([](PickleWriter &w) {
              w.beginTuple();
              w.integer(0);
              w.integer(0);
              w.end();
            }),
            std::string("\x80\x02(K\x00K\x00t.", 9));
}

struct Replayed {
  uint64_t peakAllocated = 0, reserved = 0;
};

Replayed replay(const MemorySnapshot &s) {
  Replayed r;
  std::map<uint64_t, uint64_t> live;
  uint64_t bytes = 0;
  for (const MemorySnapshot::TraceEntry &e : s.trace) {
    if (e.action == MemorySnapshot::Action::Alloc) {
      EXPECT_TRUE(live.emplace(e.addr, e.size).second) << "address handed out twice";
      bytes += e.size;
      r.peakAllocated = std::max(r.peakAllocated, bytes);
    } else if (e.action == MemorySnapshot::Action::FreeCompleted) {
      bytes -= live.at(e.addr);
      live.erase(e.addr);
    }
  }
  for (const MemorySnapshot::Segment &seg : s.segments) {
    r.reserved += seg.totalSize;
    uint64_t at = seg.address;
    for (const MemorySnapshot::Block &b : seg.blocks) {
      EXPECT_EQ(b.address, at) << "blocks must tile their segment";
      at += b.size;
    }
    EXPECT_EQ(at, seg.address + seg.totalSize);
  }
  return r;
}

TEST(MemorySnapshot, ReplaysToThePlansPeaks) {
  struct Case {
    const char *model;
    bool train;
  };
  for (Case c : {Case{"models/resnet18.onnx", false}, Case{"models/resnet18.onnx", true},
                 Case{"tests/fixtures/fx/tiny_llama.train.fx.json", true}}) {
    LintOptions opts;
    opts.setup.train = c.train;
    opts.memorySnapshot = true;
    FileReport r = lintFile(sourcePath(c.model), opts);
    ASSERT_FALSE(r.fatal) << r.fatalMessage;
    ASSERT_TRUE(r.snapshot.present);
    Replayed got = replay(r.snapshot);
    EXPECT_EQ(got.peakAllocated, r.memory.peakAllocatedBytes) << c.model << " train " << c.train;
    EXPECT_EQ(got.reserved, r.memory.peakReservedBytes) << c.model << " train " << c.train;
    EXPECT_EQ(r.snapshot.peakReservedBytes, r.memory.peakReservedBytes);
    // Categories torch's memory profiler uses, and the user's lines.
    std::set<std::string> categories;
    size_t withLine = 0;
    for (const MemorySnapshot::Storage &st : r.snapshot.storages) {
      categories.insert(st.category);
      withLine += st.frames.size() > 1 && st.frames[1].line > 0;
    }
    EXPECT_TRUE(categories.count("parameter"));
    EXPECT_TRUE(categories.count("activation"));
    if (c.train) {
      EXPECT_TRUE(categories.count("gradient"));
      EXPECT_TRUE(categories.count("optimizer_state"));
    }
    if (llvm::StringRef(c.model).endswith(".fx.json")) {
      EXPECT_GT(withLine, 0u) << "an FX capture records source lines";
    }
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    renderMemorySnapshot(r.snapshot, os);
    os.flush();
    EXPECT_EQ(bytes.substr(0, 2), std::string("\x80\x02", 2));
    EXPECT_EQ(bytes.back(), '.');
  }
}

}  // namespace

namespace {

// --memory-plot stacks the timeline by the snapshot's categories: each
// point's categories add up to its live bytes, the chart has one band per
// category the step holds, and the peak's largest tensors are named on it.
TEST(MemoryPlot, StacksCategoriesAndLabelsThePeak) {
  LintOptions opts;
  opts.setup.train = true;
  FileReport r = lintFile(sourcePath("tests/fixtures/fx/tiny_llama.train.fx.json"), opts);
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  const MemorySummary &m = r.memory;
  ASSERT_FALSE(m.timeline.empty());
  std::array<bool, MemorySummary::kCategories> used{};
  for (const MemorySummary::Point &p : m.timeline) {
    uint64_t sum = 0;
    for (size_t k = 0; k < MemorySummary::kCategories; ++k) {
      sum += p.categoryBytes[k];
      used[k] = used[k] || p.categoryBytes[k] > 0;
    }
    EXPECT_EQ(sum, p.liveBytes) << p.node;
  }
  for (const char *c : {"parameter", "gradient", "optimizer_state", "activation"}) {
    size_t k = std::find_if(std::begin(MemorySummary::kCategoryNames), std::end(MemorySummary::kCategoryNames),
                            [&](const char *n) { return std::string(n) == c; }) -
               std::begin(MemorySummary::kCategoryNames);
    EXPECT_TRUE(used[k]) << c;
  }
  std::string svg;
  llvm::raw_string_ostream os(svg);
  renderMemorySvg(m, "tiny_llama", os);
  os.flush();
  size_t bands = 0;
  for (size_t at = svg.find("<polygon"); at != std::string::npos; at = svg.find("<polygon", at + 1))
    ++bands;
  EXPECT_EQ(bands, static_cast<size_t>(std::count(used.begin(), used.end(), true)));
  EXPECT_NE(svg.find("largest at the peak:"), std::string::npos);
  ASSERT_FALSE(m.topAtPeak.empty());
  const MemorySummary::Contributor &top = m.topAtPeak.front();
  EXPECT_NE(svg.find(formatBytes(static_cast<double>(top.bytes))), std::string::npos);
  ASSERT_LT(top.category, MemorySummary::kCategories);
  for (const MemorySummary::Contributor &c : m.topAtPeak)
    if (c.kind == "param" || c.kind == "optimizer_state") {
      EXPECT_STREQ(MemorySummary::kCategoryNames[c.category], c.kind == "param" ? "parameter" : "optimizer_state");
    }
}

}  // namespace
