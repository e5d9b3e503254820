// Files beyond 2 GiB: protobuf's own parser refuses them, graphlint's
// wire-level reader never reads payloads. The file is sparse, so the test
// costs a few KB of disk however large the declared weights are.
#include "TestSupport.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace

TEST(LargeFile, ThreeGiBInitializerIsSkippedNotRead) {
  const uint64_t payload = 3ull << 30;  // 3 GiB of float32 weights
  // The graph: y = MatMul(x, w) with w a [786432, 1024] float initializer.
  onnx::ModelProto head;
  ASSERT_TRUE(head.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 786432] x) => (float[1, 1024] y) {
      y = MatMul(x, w)
    })")));
  onnx::TensorProto w;
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(786432);
  w.add_dims(1024);
  std::string tensorHead;
  w.SerializeToString(&tensorHead);
  std::string rawTag;
  putVarint(rawTag, (9 << 3) | 2);  // raw_data
  putVarint(rawTag, payload);
  uint64_t tensorLen = tensorHead.size() + rawTag.size() + payload;

  std::string graphRest;
  head.graph().SerializeToString(&graphRest);
  std::string initTag;
  putVarint(initTag, (5 << 3) | 2);  // GraphProto.initializer
  putVarint(initTag, tensorLen);
  uint64_t graphLen = graphRest.size() + initTag.size() + tensorLen;

  onnx::ModelProto noGraph = head;
  noGraph.clear_graph();
  std::string modelHead;
  noGraph.SerializeToString(&modelHead);
  putVarint(modelHead, (7 << 3) | 2);  // ModelProto.graph
  putVarint(modelHead, graphLen);

  std::string path = tempDir() + "/big.onnx";
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  std::string before = modelHead + graphRest + initTag + tensorHead + rawTag;
  ASSERT_EQ(::write(fd, before.data(), before.size()), static_cast<ssize_t>(before.size()));
  // Leave a hole for the payload; nothing after it.
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(before.size() + payload)), 0);
  ::close(fd);

  auto m = importModelFile(path, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  ASSERT_EQ((*m)->graph->params().size(), 1u);
  const TensorLiteral &t = (*m)->graph->params()[0]->tensor;
  EXPECT_EQ(t.byteSize, payload);
  EXPECT_EQ(t.storedBytes, payload);
  EXPECT_EQ(t.storage, TensorLiteral::Storage::Inline);
  EXPECT_EQ((*m)->graph->outputs[0]->type.str(), "f32[1,1024]");
  EXPECT_GT((*m)->fileSize, 0u);
  ::unlink(path.c_str());
}
