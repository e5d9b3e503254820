#!/usr/bin/env python3
"""Creates every piece of a new graphlint rule at once (as clang-tidy's
add_new_check.py and ruff's add_rule.py do):

  rules/<Class>.cpp                         the rule: RuleInfo + check(), a factory
  docs/rules/<CODE>-<name>.md               its page (embedded into the binary)
  tests/fixtures/rules/<CODE>-<name>.onnxtxt a fixture with `# expect:` markers,
                                            run by RuleCatalog.OnnxTextFixtures...
  rules/Registry.cpp                        the factory's declaration and its line
                                            in the sorted list
  rules/CMakeLists.txt                      the source file, in the rules layer's list

Usage: scripts/new_rule.py GL143 wide-reduction "a reduction over ... " [--severity warning]
       [--root DIR]  (a checkout; default: this script's repository)

Codes are a public contract: the script refuses a code or name already used.
"""
import argparse
import pathlib
import re
import sys

SEVERITIES = {"error": "Error", "warning": "Warning", "note": "Note"}


def fail(msg):
    print(f"new_rule.py: {msg}", file=sys.stderr)
    sys.exit(2)


def class_name(name):
    return "".join(part.capitalize() for part in name.split("-"))


RULE_CPP = """// {code} {name}: {summary}.
// What the rule reads and why, in a line or two (docs/rules/{code}-{name}.md).
#include "graphlint/ir/Display.h"
#include "graphlint/lint/Rule.h"

#include <fmt/format.h>

namespace graphlint {{
namespace {{

class {cls} final : public Rule {{
public:
  const RuleInfo &info() const override {{
    static const RuleInfo i{{"{code}", "{name}", Severity::{sev},
                            "{summary}"}};
    return i;
  }}

  // Called for every node from the driver's one traversal; a rule that
  // needs the whole model overrides check() instead.
  bool perNode() const override {{ return true; }}

  void checkNode(const Node &n, const Model &, AnalysisContext &, DiagnosticSink &sink) const override {{
    // Read shared facts through ctx.get<...>() and ir/ValueFacts.h; never recompute them here.
    if (!fires(n))
      return;
    sink.report(n, fmt::format("{{}}: {summary}", nodeWithOp(n))).note("how to fix it");
  }}

private:
  // The condition from the page's "What it checks".
  static bool fires(const Node &n) {{ return n.opType == "{probe_op}"; }}
}};

}}  // namespace

const Rule *make{cls}Rule() {{
  static const {cls} rule;
  return &rule;
}}

}}  // namespace graphlint
"""

DOC_MD = """# {code} {name}

Default severity: {sev_lower}

## What it checks

{summary_cap}.

## Why it matters

What the user would otherwise find out only on the GPU.

## Example

```
{fixture}```

## How to fix

- The change to the model or the export that removes it.

## Limitations

- What the rule cannot see.
"""

FIXTURE = """# {code} {name}: {summary}.
<ir_version: 8, opset_import: ["" : 17]>
g (float[8] x) => (float[8] y) {{
  y = {probe_op}(x)                # expect: {code}
}}
"""


def main():
    ap = argparse.ArgumentParser(description="Create a new graphlint rule's file, page, fixture and registry entry.")
    ap.add_argument("code", help="GLnnn, unused")
    ap.add_argument("name", help="kebab-case name, unused")
    ap.add_argument("summary", help="one line for `graphlint rules` (what fires, lower case, no final stop)")
    ap.add_argument("--severity", default="warning", choices=sorted(SEVERITIES))
    ap.add_argument("--probe-op", default="Relu",
                    help="the op the generated check and fixture start from (edit both afterwards)")
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    a = ap.parse_args()

    root = pathlib.Path(a.root)
    if not re.fullmatch(r"GL\d{3}", a.code):
        fail(f"code '{a.code}': expected GL and three digits")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", a.name):
        fail(f"name '{a.name}': expected kebab-case (lower-case words joined by '-')")
    if '"' in a.summary or "\\" in a.summary or "\n" in a.summary:
        fail("summary: one line, without quotes or backslashes")
    registry = root / "rules" / "Registry.cpp"
    cmake = root / "rules" / "CMakeLists.txt"
    for f in (registry, cmake, root / "docs" / "rules"):
        if not f.exists():
            fail(f"{f}: not found (is --root a graphlint checkout?)")
    for page in (root / "docs" / "rules").glob("GL*.md"):
        code, _, name = page.stem.partition("-")
        if code == a.code or name == a.name:
            fail(f"{a.code} {a.name}: already used by {page.name} (codes are never reused)")

    cls = class_name(a.name)
    sev = SEVERITIES[a.severity]
    fields = dict(code=a.code, name=a.name, summary=a.summary, cls=cls, sev=sev, sev_lower=a.severity,
                  summary_cap=a.summary[:1].upper() + a.summary[1:], probe_op=a.probe_op)
    fields["fixture"] = FIXTURE.format(**fields)
    rule_cpp = root / "rules" / f"{cls}.cpp"
    doc = root / "docs" / "rules" / f"{a.code}-{a.name}.md"
    fixture = root / "tests" / "fixtures" / "rules" / f"{a.code}-{a.name}.onnxtxt"
    for f in (rule_cpp, doc, fixture):
        if f.exists():
            fail(f"{f}: already exists")

    # Registry: the declaration after the last one, the entry in code order.
    text = registry.read_text()
    decls = list(re.finditer(r"^const Rule \*make\w+Rule\(\);\n", text, re.M))
    entries = list(re.finditer(r"^(\s+)make\w+Rule\(\),\s*// (GL\d{3})\n", text, re.M))
    if not decls or not entries:
        fail(f"{registry}: the declarations or the sorted list were not found")
    after = [e for e in entries if e.group(2) > a.code]
    indent = entries[0].group(1)
    entry = f"{indent}make{cls}Rule(),  // {a.code}\n"
    pos = after[0].start() if after else entries[-1].end()
    text = text[:pos] + entry + text[pos:]
    end = decls[-1].end()
    text = text[:end] + f"const Rule *make{cls}Rule();\n" + text[end:]

    src = cmake.read_text()
    m = re.search(r"(graphlint_add_layer\(rules\n(?:  \S+\n)*?  \S+)\)", src)
    if not m:
        fail(f"{cmake}: the rules layer's source list was not found")
    src = src[:m.end(1)] + f"\n  {cls}.cpp" + src[m.end(1):]

    fixture.parent.mkdir(parents=True, exist_ok=True)
    rule_cpp.write_text(RULE_CPP.format(**fields))
    doc.write_text(DOC_MD.format(**fields))
    fixture.write_text(fields["fixture"])
    registry.write_text(text)
    cmake.write_text(src)
    for f in (rule_cpp, doc, fixture, registry, cmake):
        print(f.relative_to(root))


if __name__ == "__main__":
    main()
