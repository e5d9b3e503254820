#include "graphlint/onnx/ExternalData.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"

#include "WireStripper.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <set>

namespace graphlint {

namespace {

llvm::Error refuse(std::string why) { return llvm::createStringError(llvm::inconvertibleErrorCode(), why); }

}  // namespace

llvm::Expected<std::string> resolveExternalData(const std::string &modelPath, const std::string &loc) {
  std::string shown = escapedForMessage(loc);
  if (loc.empty())
    return refuse("has an empty external data location");
  if (loc.find('\0') != std::string::npos)
    return refuse(fmt::format("external data path '{}' contains a NUL byte; refused", shown));
  if (llvm::sys::path::is_absolute(loc) || llvm::sys::path::is_absolute(loc, llvm::sys::path::Style::windows) ||
      loc.find(':') != std::string::npos)
    return refuse(fmt::format("names an absolute external data path '{}'; refused", shown));
  int depth = 0;
  for (auto it = llvm::sys::path::begin(loc), e = llvm::sys::path::end(loc); it != e; ++it) {
    if (*it == "..")
      --depth;
    else if (*it != ".")
      ++depth;
    if (depth < 0)
      return refuse(fmt::format("external data path '{}' escapes the model's directory; refused", shown));
  }
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(modelPath));
  if (dir.empty())
    dir = ".";
  llvm::SmallString<256> full(dir);
  llvm::sys::path::append(full, loc);
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(full, st))
    return full.str().str();  // absent: reported as missing weights
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return refuse(fmt::format("external data path '{}' is not a regular file; refused", shown));
  llvm::SmallString<256> realDir, realFile;
  if (!llvm::sys::fs::real_path(dir, realDir) && !llvm::sys::fs::real_path(full, realFile) &&
      !llvm::StringRef(realFile).startswith((realDir + "/").str()))
    return refuse(
        fmt::format("external data path '{}' resolves outside the model's directory (symlink); refused", shown));
  return full.str().str();
}

llvm::Expected<std::string> readExternalData(const std::string &modelPath, const std::string &location,
                                             uint64_t offset, uint64_t length) {
  auto path = resolveExternalData(modelPath, location);
  if (!path)
    return path.takeError();
  auto file = InputFile::open(*path);
  if (!file)
    return refuse(fmt::format("external data '{}': {}", escapedForMessage(location), llvm::toString(file.takeError())));
  auto bytes = file->read(offset, length);
  if (!bytes)
    return refuse(
        fmt::format("external data '{}': {}", escapedForMessage(location), llvm::toString(bytes.takeError())));
  return bytes;
}

namespace {

// Every external-data location of the tensors in `g` and the graphs nested in
// its nodes' attributes.
void collectLocations(const onnx::GraphProto &g, std::set<std::string> &out, unsigned depth) {
  if (depth > 64)
    return;
  auto tensor = [&](const onnx::TensorProto &t) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      for (const auto &kv : t.external_data())
        if (kv.key() == "location")
          out.insert(kv.value());
  };
  for (const auto &t : g.initializer())
    tensor(t);
  for (const auto &s : g.sparse_initializer()) {
    tensor(s.values());
    tensor(s.indices());
  }
  for (const auto &n : g.node())
    for (const auto &a : n.attribute()) {
      if (a.has_t())
        tensor(a.t());
      for (const auto &t : a.tensors())
        tensor(t);
      if (a.has_g())
        collectLocations(a.g(), out, depth + 1);
      for (const auto &sub : a.graphs())
        collectLocations(sub, out, depth + 1);
    }
}

}  // namespace

std::vector<std::string> externalDataFilesOf(const std::string &modelPath) {
  auto file = InputFile::open(modelPath);
  if (!file) {
    llvm::consumeError(file.takeError());
    return {};
  }
  onnxio::ByteWindow window(file->fd(), file->size());
  const uint8_t *head = file->size() ? window.at(0, 1) : nullptr;
  if (!head || *head == '{' || *head == '[' || *head == 'P')  // FX JSON, a .pt2 zip: no external data
    return {};
  onnxio::StripResult stripped = onnxio::stripPayloads(window);
  if (!stripped.ok)
    return {};
  onnx::ModelProto proto;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(stripped.stripped.data()),
                                            static_cast<int>(stripped.stripped.size()));
  in.SetRecursionLimit(400);
  if (!proto.ParseFromCodedStream(&in))
    return {};
  std::set<std::string> locations;
  collectLocations(proto.graph(), locations, 0);
  std::vector<std::string> out;
  for (const std::string &loc : locations) {
    auto path = resolveExternalData(modelPath, loc);
    if (path)
      out.push_back(*path);
    else
      llvm::consumeError(path.takeError());  // refused: never opened, so never written over either
  }
  return out;
}

}  // namespace graphlint
