#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/ir/Display.h"

#include <fmt/format.h>

#include <llvm/Support/Process.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace graphlint {

namespace {

const char *typeName(mode_t mode) {
  if (S_ISDIR(mode))
    return "is a directory";
  if (S_ISFIFO(mode))
    return "is a FIFO (named pipe)";
  if (S_ISCHR(mode))
    return "is a character device";
  if (S_ISBLK(mode))
    return "is a block device";
  if (S_ISSOCK(mode))
    return "is a socket";
  return "is not a regular file";
}

std::string sizeText(uint64_t bytes) { return formatBytes(static_cast<double>(bytes)); }

}  // namespace

uint64_t maxInputBytes(InputKind kind) {
  switch (kind) {
  case InputKind::FxGraph: return 1ull << 30;        // ~1.5M nodes of exporter JSON
  case InputKind::Config: return 1ull << 20;         // a hand-written file
  case InputKind::Baseline: return 256ull << 20;     // ~1M findings
  case InputKind::HardwareFile: return 4ull << 20;   // hundreds of profiles
  case InputKind::SourceFile: return 8ull << 20;     // a Python file a snippet is shown from
  case InputKind::ResponseFile: return 1ull << 20;   // @FILE: a list of arguments
  case InputKind::Model:
  case InputKind::ExternalData: return 0;            // read through a window
  }
  return 0;
}

const char *inputKindSingular(InputKind kind) {
  switch (kind) {
  case InputKind::Model: return "model file";
  case InputKind::FxGraph: return "FX graph";
  case InputKind::Config: return "config file";
  case InputKind::Baseline: return "baseline";
  case InputKind::HardwareFile: return "hardware file";
  case InputKind::SourceFile: return "source file";
  case InputKind::ResponseFile: return "response file";
  case InputKind::ExternalData: return "external data file";
  }
  return "input";
}

const char *inputKindName(InputKind kind) {
  switch (kind) {
  case InputKind::Model: return "model files";
  case InputKind::FxGraph: return "FX graphs";
  case InputKind::Config: return "config files";
  case InputKind::Baseline: return "baselines";
  case InputKind::HardwareFile: return "hardware files";
  case InputKind::SourceFile: return "source files";
  case InputKind::ResponseFile: return "response files";
  case InputKind::ExternalData: return "external data files";
  }
  return "inputs";
}

llvm::Expected<InputFile> InputFile::open(const std::string &path) {
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return stringError(errno == ENOENT ? "no such file" : fmt::format("cannot read: {}", std::strerror(errno)));
  InputFile f(fd, 0);
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return stringError(fmt::format("cannot read: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return stringError(fmt::format("{}, not a regular file", typeName(st.st_mode)));
  // Regular files ignore O_NONBLOCK; clear it anyway so reads never see EAGAIN.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  f.size_ = static_cast<uint64_t>(st.st_size);
  return std::move(f);
}

InputFile::~InputFile() {
  if (fd_ >= 0)
    llvm::sys::Process::SafelyCloseFileDescriptor(fd_);
}

llvm::Expected<std::string> InputFile::read(uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset)
    return stringError(fmt::format("has {} bytes, fewer than offset {} + {} bytes", size_, offset, length));
  std::string out(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return stringError(n == 0 ? "the file shrank while being read" : fmt::format("cannot read: {}", std::strerror(errno)));
    done += static_cast<uint64_t>(n);
  }
  return out;
}

llvm::Expected<std::string> readInputFile(const std::string &path, InputKind kind) {
  auto named = [&](llvm::Error e) {
    return stringError(fmt::format("{}: {}", path, llvm::toString(std::move(e))));
  };
  auto file = InputFile::open(path);
  if (!file) {
    std::string why = llvm::toString(file.takeError());
    if (why.find("not a regular file") != std::string::npos)
      return stringError(fmt::format("{}: {} ({} must be regular files)", path, why, inputKindName(kind)));
    llvm::StringRef reason(why);
    reason.consume_front("cannot read: ");
    return stringError(fmt::format("{}: cannot read {}: {}", path, inputKindSingular(kind), reason.str()));
  }
  uint64_t limit = maxInputBytes(kind);
  if (limit && file->size() > limit)
    return stringError(fmt::format("{}: is {}, larger than the {} limit for {}", path, sizeText(file->size()),
                            sizeText(limit), inputKindName(kind)));
  try {
    auto bytes = file->read(0, file->size());
    if (!bytes)
      return named(bytes.takeError());
    return bytes;
  } catch (const std::bad_alloc &) {
    return stringError(fmt::format("{}: cannot hold its {} in memory", path, sizeText(file->size())));
  }
}

// --- nesting pre-scan ------------------------------------------------------

namespace {

llvm::Error tooDeep(const std::string &path, unsigned line, unsigned limit, const char *what) {
  return stringError(fmt::format("{}: {} nested deeper than {} levels; refused (the parser would exhaust its stack)",
                          path.empty() ? fmt::format("line {}", line) : fmt::format("{}:{}", path, line), what,
                          limit));
}

llvm::Error jsonDepth(llvm::StringRef t, const std::string &path, unsigned limit) {
  unsigned depth = 0, line = 1;
  for (size_t i = 0; i < t.size(); ++i) {
    switch (t[i]) {
    case '\n': ++line; break;
    case '"':  // skip the string, escaped quotes included
      for (++i; i < t.size() && t[i] != '"'; ++i) {
        if (t[i] == '\\')
          ++i;
        else if (t[i] == '\n')
          ++line;
      }
      break;
    case '[':
    case '{':
      if (++depth > limit)
        return tooDeep(path, line, limit, "JSON");
      break;
    case ']':
    case '}': depth -= depth > 0; break;
    default: break;
    }
  }
  return llvm::Error::success();
}

bool blank(char c) { return c == ' ' || c == '\t'; }
bool blankOrEnd(llvm::StringRef t, size_t i) { return i >= t.size() || blank(t[i]) || t[i] == '\n' || t[i] == '\r'; }

// YAML. Quoted scalars are entered only where a scalar certainly starts
// (line start, after '[', '{', a flow ',', ': ', '- ', an anchor or tag):
// missing a quote only counts brackets inside it, while entering a false one
// could hide real nesting.
class YamlDepth {
public:
  YamlDepth(llvm::StringRef t, const std::string &path, unsigned limit) : t_(t), path_(path), limit_(limit) {}

  llvm::Error run() {
    size_t i = 0;
    while (i < t_.size()) {
      size_t end = t_.find('\n', i);
      if (end == llvm::StringRef::npos)
        end = t_.size();
      if (llvm::Error e = scanLine(i, end))
        return e;
      i = end + 1;
      ++line_;
    }
    return llvm::Error::success();
  }

private:
  unsigned depth() const { return static_cast<unsigned>(blocks_.size()) + flow_; }
  llvm::Error check() { return depth() > limit_ ? tooDeep(path_, line_, limit_, "YAML") : llvm::Error::success(); }

  llvm::Error scanLine(size_t begin, size_t end) {
    size_t i = begin;
    while (i < end && t_[i] == ' ')
      ++i;
    unsigned indent = static_cast<unsigned>(i - begin);
    bool empty = i >= end || t_[i] == '\r' || (t_[i] == '#' && quote_ == 0);
    // Lines of a block scalar (| or >) are text, whatever they contain.
    if (blockScalarParent_ >= 0 && quote_ == 0 && flow_ == 0) {
      if (empty)
        return llvm::Error::success();
      if (blockScalarIndent_ < 0 && static_cast<int>(indent) > blockScalarParent_)
        blockScalarIndent_ = static_cast<int>(indent);
      if (blockScalarIndent_ >= 0 && static_cast<int>(indent) >= blockScalarIndent_)
        return llvm::Error::success();
      blockScalarParent_ = blockScalarIndent_ = -1;
    }
    if (quote_ == 0 && flow_ == 0) {
      if (empty)
        return llvm::Error::success();
      // A plain scalar continues on lines indented deeper than its own.
      bool continued = plainLine_ >= 0 && static_cast<int>(indent) > plainLine_;
      plainLine_ = -1;
      tokenStart_ = !continued;
      lineIndent_ = indent;
      if (!continued) {
        if (t_[i] == '%' && indent == 0)
          return llvm::Error::success();  // a directive
        // A document marker, anchors and tags may stand before the entries
        // ("--- &a !!seq - - x"): they are stepped over and the entries after
        // them counted, so no prefix hides compact nesting.
        if ((t_.substr(i).startswith("---") || t_.substr(i).startswith("...")) && blankOrEnd(t_, i + 3)) {
          i += 3;
          while (i < end && blank(t_[i]))
            ++i;
        }
        push(indent);
        for (;;) {
          if (i < end && (t_[i] == '&' || t_[i] == '!')) {
            while (i < end && !blankOrEnd(t_, i))
              ++i;
            while (i < end && blank(t_[i]))
              ++i;
          } else if (i < end && (t_[i] == '-' || t_[i] == '?') && blankOrEnd(t_, i + 1)) {
            // Compact nesting: every "- " or "? " opens one more block level.
            ++i;
            while (i < end && blank(t_[i]))
              ++i;
            if (i < end && t_[i] != '\r' && t_[i] != '#')
              blocks_.push_back(static_cast<unsigned>(i - begin));
          } else {
            break;
          }
        }
        if (llvm::Error e = check())
          return e;
      }
    }
    for (; i < end; ++i) {
      char c = t_[i];
      if (quote_ == '\'') {
        if (c == '\'' && i + 1 < end && t_[i + 1] == '\'')
          ++i;
        else if (c == '\'')
          quote_ = 0, plainLine_ = -1;
        continue;
      }
      if (quote_ == '"') {
        if (c == '\\')
          ++i;
        else if (c == '"')
          quote_ = 0, plainLine_ = -1;
        continue;
      }
      if (c == '#' && (i == begin || blank(t_[i - 1])))
        break;  // a comment runs to the end of the line
      if (blank(c) || c == '\r')
        continue;
      bool start = tokenStart_;
      tokenStart_ = false;
      if ((c == '[' || c == '{') && (start || flow_ > 0)) {
        ++flow_;
        tokenStart_ = true;
        if (llvm::Error e = check())
          return e;
      } else if ((c == ']' || c == '}') && flow_ > 0) {
        --flow_;
      } else if (c == ',' && flow_ > 0) {
        tokenStart_ = true;
      } else if ((c == '\'' || c == '"') && start) {
        quote_ = c;
      } else if ((c == ':' || c == '-' || c == '?') && blankOrEnd(t_, i + 1)) {
        tokenStart_ = c == ':' || start;
        plainLine_ = -1;  // a key, or an entry: what follows is a new node
      } else if ((c == '&' || c == '!') && start) {
        while (i + 1 < end && !blankOrEnd(t_, i + 1))
          ++i;
        tokenStart_ = true;
      } else if ((c == '|' || c == '>') && start && flow_ == 0) {
        blockScalarParent_ = static_cast<int>(lineIndent_);
        blockScalarIndent_ = -1;
        break;  // only indicators and a comment may follow on this line
      } else if (flow_ == 0) {
        plainLine_ = static_cast<int>(lineIndent_);
      }
    }
    return llvm::Error::success();
  }

  // Block levels are the distinct indentations still open above this line.
  void push(unsigned indent) {
    while (!blocks_.empty() && blocks_.back() >= indent)
      blocks_.pop_back();
    blocks_.push_back(indent);
  }

  llvm::StringRef t_;
  const std::string &path_;
  unsigned limit_;
  unsigned line_ = 1;
  std::vector<unsigned> blocks_;
  unsigned flow_ = 0;
  char quote_ = 0;
  bool tokenStart_ = true;
  unsigned lineIndent_ = 0;
  int plainLine_ = -1;         // indentation of the line whose plain scalar may continue
  int blockScalarParent_ = -1; // indentation of the line that opened a block scalar
  int blockScalarIndent_ = -1; // indentation of the block scalar's text
};

}  // namespace

llvm::Error checkNestingDepth(llvm::StringRef text, TextSyntax syntax, const std::string &path, unsigned limit) {
  if (syntax == TextSyntax::Json)
    return jsonDepth(text, path, limit);
  return YamlDepth(text, path, limit).run();
}

}  // namespace graphlint
