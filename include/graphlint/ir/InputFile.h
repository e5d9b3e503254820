// Every file graphlint reads (models, FX JSON, .graphlint.yaml, baselines,
// the hardware file, external weight data, source snippets, @FILE response
// files) is opened through here, so that a
// FIFO, a device or a directory is refused before it can block or stream
// forever, a file larger than its kind ever needs is refused before it is
// read whole, and text is checked for nesting that would exhaust a recursive
// parser's stack. docs/robustness.md lists the limits.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>

namespace graphlint {

/// What an input is, which sets its size limit and the words of messages.
enum class InputKind : uint8_t { Model, FxGraph, Config, Baseline, HardwareFile, ExternalData, SourceFile, ResponseFile };

/// The largest file of `kind` that is read whole (bytes); 0 = no limit
/// (models and external data are read through a window, never whole).
uint64_t maxInputBytes(InputKind kind);
/// "config files", "baselines", ...: how messages name inputs of `kind`.
const char *inputKindName(InputKind kind);
/// "config file", "baseline", ...: one input of `kind`.
const char *inputKindSingular(InputKind kind);

/// A file opened for reading: a regular file, checked after the open on the
/// descriptor itself (no window for a FIFO to be swapped in). Closes on
/// destruction.
class InputFile {
public:
  /// Opens `path` without blocking (O_NONBLOCK, so a FIFO cannot hang the
  /// open) and refuses anything but a regular file. The error is one line
  /// without the path ("is a FIFO, not a regular file"); callers prefix it.
  static llvm::Expected<InputFile> open(const std::string &path);
  InputFile(InputFile &&o) noexcept : fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  InputFile &operator=(InputFile &&) = delete;
  ~InputFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  /// Exactly `length` bytes at `offset`, or an error naming what was short.
  llvm::Expected<std::string> read(uint64_t offset, uint64_t length) const;

private:
  InputFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// The whole of `path`, refused when it is not a regular file or larger than
/// maxInputBytes(kind). The message names the file: "PATH: is a FIFO, not a
/// regular file (config files must be regular files)".
llvm::Expected<std::string> readInputFile(const std::string &path, InputKind kind);

/// How deeply JSON or YAML may nest: the parsers (llvm::json, llvm::yaml)
/// recurse once per level, and no file graphlint reads needs more than a
/// handful of levels.
constexpr unsigned kMaxNestingDepth = 64;

enum class TextSyntax : uint8_t { Json, Yaml };

/// A linear pre-scan of `text` before it reaches a recursive parser: success
/// when it nests at most `limit` levels, else "PATH:LINE: nested deeper than
/// LIMIT levels" for the first line that goes past. JSON strings, YAML quoted
/// scalars, block scalars and comments are skipped; YAML counts flow
/// collections and block nesting (indentation, compact "- - x" entries)
/// together. It errs towards counting too much, never too little.
llvm::Error checkNestingDepth(llvm::StringRef text, TextSyntax syntax, const std::string &path,
                              unsigned limit = kMaxNestingDepth);

}  // namespace graphlint
