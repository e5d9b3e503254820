#include "graphlint/ir/StackTrace.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace graphlint {

namespace {

// 'File "x.py", line 12, in forward' (trimmed) -> loc; false for any other line.
bool parsePythonFrame(llvm::StringRef line, SourceLoc &loc) {
  if (!line.consume_front("File \""))
    return false;
  size_t q = line.find('"');
  if (q == llvm::StringRef::npos)
    return false;
  loc.file = line.substr(0, q).str();
  llvm::StringRef rest = line.substr(q + 1);
  if (!rest.consume_front(", line "))
    return false;
  llvm::StringRef num = rest.take_while([](char c) { return llvm::isDigit(c); });
  if (num.getAsInteger(10, loc.line))
    return false;
  rest = rest.drop_front(num.size());
  if (rest.consume_front(", in "))
    loc.function = rest.trim().str();
  return true;
}

// A Python name that can be assigned: not a keyword ("else: x = 1" binds x,
// and its '=' is found after "else").
bool isAssignableName(llvm::StringRef s) {
  static constexpr llvm::StringLiteral kKeywords[] = {
      "False", "None",  "True",   "and",    "as",     "assert",   "async", "await",  "break",
      "class", "continue", "def", "del",    "elif",   "else",     "except", "finally", "for",
      "from",  "global", "if",    "import", "in",     "is",       "lambda", "nonlocal", "not",
      "or",    "pass",   "raise", "return", "try",    "while",    "with",  "yield"};
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_') ||
      !llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return false;
  return llvm::find(kKeywords, s) == std::end(kKeywords);
}

}  // namespace

SourceLoc parseStackTrace(llvm::StringRef trace) {
  SourceLoc best;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  trace.split(lines, '\n', -1, false);
  for (llvm::StringRef raw : lines) {
    llvm::StringRef line = raw.trim();
    SourceLoc loc;
    if (line.startswith("File \"")) {
      // Python traceback frame: File "x.py", line 12, in forward
      if (!parsePythonFrame(line, loc))
        continue;
    } else {
      // TorchScript source range: /path/x.py(12): forward
      size_t open = line.rfind("):");
      size_t paren = open == llvm::StringRef::npos ? open : line.rfind('(', open);
      if (paren == llvm::StringRef::npos || paren == 0)
        continue;
      llvm::StringRef num = line.slice(paren + 1, open);
      if (num.getAsInteger(10, loc.line))
        continue;
      loc.file = line.substr(0, paren).str();
      loc.function = line.substr(open + 2).trim().str();
      if (!llvm::StringRef(loc.file).endswith(".py"))
        continue;
    }
    // Frames are listed outermost first; the innermost user frame is the last
    // one outside torch itself.
    // (torch.export records some of its own frames relative: "torch/fx/...").
    // Generated code ("<eval_with_key>.23", "<string>") is not the user's either.
    if (loc.valid() && loc.file.find("/torch/") == std::string::npos && loc.file.rfind("torch/", 0) != 0 &&
        loc.file[0] != '<')
      best = loc;
  }
  return best;
}

std::vector<TraceFrame> parseTraceFrames(llvm::StringRef trace, size_t maxFrames) {
  std::vector<TraceFrame> frames;
  bool codeNext = false;  // the line after a frame's is its source line
  while (!trace.empty()) {
    llvm::StringRef raw;
    std::tie(raw, trace) = trace.split('\n');
    llvm::StringRef line = raw.trim();
    SourceLoc loc;
    if (parsePythonFrame(line, loc)) {
      // Generated code (an FX GraphModule's "<eval_with_key>.28", "<string>")
      // binds no local of the user's: its forward drops each value after its
      // last read (`a = b = None`).
      if (llvm::StringRef(loc.file).startswith("<")) {
        codeNext = false;
        continue;
      }
      if (frames.size() == maxFrames)
        break;
      frames.push_back({std::move(loc.file), loc.line, std::move(loc.function), {}});
      codeNext = true;
    } else {
      if (codeNext)
        frames.back().code = line.str();
      codeNext = false;
    }
  }
  return frames;
}

llvm::SmallVector<llvm::StringRef, 4> assignedNames(llvm::StringRef code) {
  llvm::SmallVector<llvm::StringRef, 4> names;
  // The first '=' outside brackets and strings that is not part of ==, <=,
  // >=, != (an augmented '+=' is an assignment: its operator is dropped).
  int depth = 0;
  char quote = 0;
  size_t eq = llvm::StringRef::npos, colon = llvm::StringRef::npos;
  for (size_t i = 0; i < code.size() && eq == llvm::StringRef::npos; ++i) {
    char c = code[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    switch (c) {
    case '\'':
    case '"':
      quote = c;
      break;
    case '#':
      return names;
    case '(':
    case '[':
    case '{':
      ++depth;
      break;
    case ')':
    case ']':
    case '}':
      --depth;
      break;
    case ':':
      if (depth == 0 && colon == llvm::StringRef::npos)
        colon = i;  // an annotation ("x: T = ..."), or a compound statement's header
      break;
    case '=':
      if (depth != 0)
        break;
      if (i + 1 < code.size() && code[i + 1] == '=')
        return names;  // ==: an expression statement
      if (i > 0 && llvm::StringRef("<>!").contains(code[i - 1]))
        return names;
      eq = i;
      break;
    default:
      break;
    }
  }
  if (eq == llvm::StringRef::npos)
    return names;
  llvm::StringRef lhs = code.take_front(std::min(eq, colon)).rtrim();
  if (colon > eq)  // "x += y": drop the operator
    lhs = lhs.rtrim("+-*/%&|^@<>").rtrim();
  lhs = lhs.trim();
  if (lhs.consume_front("(") && !lhs.consume_back(")"))
    return {};
  llvm::SmallVector<llvm::StringRef, 4> parts;
  lhs.split(parts, ',', -1, false);
  for (llvm::StringRef p : parts) {
    p = p.trim();
    p.consume_front("*");
    if (!isAssignableName(p))
      return {};  // an attribute, subscript or nested target: not only locals
    names.push_back(p);
  }
  return names;
}

}  // namespace graphlint
