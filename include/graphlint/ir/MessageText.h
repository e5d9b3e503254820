// Error messages echo what the user wrote (a config key, an FX op name); this
// keeps every such message on one line and of bounded length, whatever the
// input holds: control characters become escapes (\n, \t, \x1b; the C1
// controls, the Unicode line breaks and the bidirectional controls become
// \u0085, \u2028, \u202e ...) and a long string is cut with "...(N bytes)".
// oneLine is the one escaping function every text-like report uses for
// names and messages (docs/robustness.md): a node named "mm\r\x1b[2K"
// cannot erase or recolour a terminal line, nor reorder one in an editor.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace graphlint {

/// `s` as it should appear inside a message: control bytes and DEL escaped,
/// at most `maxBytes` of it shown (cut at a UTF-8 boundary).
std::string escapedForMessage(llvm::StringRef s, size_t maxBytes = 120);

/// A whole message made one line: control characters escaped; nothing cut.
/// Idempotent: its output has no control characters left.
std::string oneLine(llvm::StringRef message);

/// `s` with every control character oneLine would escape dropped instead
/// (tabs and newlines too): for XML, which cannot hold C0 controls at all,
/// and for source snippets, whose caret columns count characters.
std::string withoutControls(llvm::StringRef s);

/// Makes `s` valid UTF-8 in place: every byte that does not belong to a
/// well-formed sequence (stray continuation bytes, truncated or overlong
/// sequences, surrogates, code points past U+10FFFF) becomes the four ASCII
/// characters `\xNN`. Valid text is left untouched. Returns whether anything
/// changed. Importers call it on every name and text a file carries, so the IR,
/// messages and the JSON/SARIF reports only ever hold UTF-8.
bool makeValidUtf8(std::string &s);

/// The error the importers and file readers return: `message` is the whole
/// text, one line, without the file name (their callers add it).
inline llvm::Error stringError(std::string message) {
  return llvm::make_error<llvm::StringError>(std::move(message), llvm::inconvertibleErrorCode());
}

}  // namespace graphlint
