"""Suppression comments in the user's source: `# graphlint: ignore[GL132]`
(several codes or rule names separated by commas) or flake8/ruff style
`# noqa: GL132` on the line that issued an op. The exporter reads every user
file the graph's source lines name (files inside the repository root only)
and writes each commented line to the FX file's top-level `suppressions`
(docs/fx-format.md); graphlint drops the findings of those rules at that line
and, with --report-unused-ignores, reports comments that suppress nothing
(GL005). A bare `# noqa` and non-graphlint codes (`# noqa: E501`) are left to
the tools they are meant for."""
import io
import os
import re
import tokenize

_IGNORE = re.compile(r"graphlint\s*:\s*ignore\s*\[([^\]]*)\]", re.IGNORECASE)
_NOQA = re.compile(r"noqa\s*:\s*([A-Za-z0-9_,\s-]+)", re.IGNORECASE)
_GL_CODE = re.compile(r"^GL\d+$", re.IGNORECASE)


def codes_in_comment(comment):
    """The rule selectors a comment names, in order, or [] for none."""
    out = []
    for m in _IGNORE.finditer(comment):
        out += [c.strip() for c in m.group(1).split(",") if c.strip()]
    for m in _NOQA.finditer(comment):
        out += [c.strip().upper() for c in re.split(r"[,\s]+", m.group(1)) if _GL_CODE.match(c.strip())]
    seen = []
    for c in out:
        if c not in seen:
            seen.append(c)
    return seen


def comments_of(path):
    """(line, comment text) of every comment in a Python file; [] when it
    cannot be read or tokenized (then nothing in it is suppressed)."""
    try:
        with open(path, "rb") as f:
            data = f.read(8 << 20)
        toks = tokenize.tokenize(io.BytesIO(data).readline)
        return [(t.start[0], t.string) for t in toks if t.type == tokenize.COMMENT]
    except (OSError, SyntaxError, tokenize.TokenError, UnicodeDecodeError):
        return []


def source_suppressions(nodes, root):
    """The `suppressions` entries for the user files `nodes` (FX JSON node
    dicts) take their lines from: [{"file", "line", "codes"}], sorted."""
    files = sorted({n["source"]["file"] for n in nodes if n.get("source") and not os.path.isabs(n["source"]["file"])})
    out = []
    for rel in files:
        for line, text in comments_of(os.path.join(root, rel)):
            codes = codes_in_comment(text)
            if codes:
                out.append({"file": rel, "line": line, "codes": codes})
    return out
