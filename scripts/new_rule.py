#!/usr/bin/env python3
"""Creates every piece of a new graphlint rule at once (as clang-tidy's
add_new_check.py and ruff's add_rule.py do):

  src/rules/<Class>.cpp                      the rule: RuleInfo, checkNode(), its options
                                             struct and table (with --option), and the
                                             GRAPHLINT_DEFINE_RULE line
  docs/rules/<CODE>-<name>.md                its page (embedded into the binary), with an
                                             Options table (with --option)
  tests/fixtures/rules/<CODE>-<name>.onnxtxt a fixture with `# expect:` markers, run by
                                             RuleCatalog.OnnxTextFixtures...
  src/rules/Rules.def                        its line in the sorted list
  docs/configuration.md                      a row per option (with --option)
  src/rules/CMakeLists.txt                   the source file, in the rules layer's list

Usage: scripts/new_rule.py GL143 wide-reduction "a reduction over ... " [--severity warning]
       [--probe-op ReduceSum] [--option NAME DEFAULT MIN MAX HELP]... [--root DIR]
       (--root: a checkout; default: this script's repository)

Codes are a public contract: the script refuses a code or name already used.
"""
import argparse
import pathlib
import re
import sys

SEVERITIES = {"error": "Error", "warning": "Warning", "note": "Note"}
RULE_LINE = re.compile(r"^GRAPHLINT_RULE\((GL\d{3}), (\w+)\)\n", re.M)
OPTION_ROW = re.compile(r"^\| GL\d{3} [a-z0-9-]+ \| `[^`]+` \|.*\n", re.M)


def fail(msg):
    print(f"new_rule.py: {msg}", file=sys.stderr)
    sys.exit(2)


def class_name(name):
    return "".join(part.capitalize() for part in name.split("-"))


def field_name(name):
    first, *rest = name.split("-")
    return first + "".join(part.capitalize() for part in rest)


def number(text, what):
    try:
        value = float(text)
    except ValueError:
        fail(f"{what} '{text}': expected a number")
    return value


def shown(value):
    """A number as `config --dump` and the config errors print it (fmt's {}: 4, 0.25, 1000000, 1e+16)."""
    return str(int(value)) if value == int(value) and abs(value) < 1e16 else repr(value)


RULE_CPP = """// {code} {name}: {summary}.
// What the rule reads and why, in a line or two (docs/rules/{code}-{name}.md).
#include "graphlint/ir/Display.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

namespace graphlint {{
namespace {{
{options_struct}
class {cls} final : public Rule {{
public:
{options_table}  static constexpr RuleInfo kInfo{{"{code}", "{name}", Severity::{sev},
      "{summary}"{options_info}}};
  const RuleInfo &info() const override {{ return kInfo; }}

  // Called for every node from the driver's one traversal; a rule that
  // needs the whole model overrides check() instead.
  bool perNode() const override {{ return true; }}

  void checkNode(const Node &n, const Model &, AnalysisContext &{ctx}, DiagnosticSink &sink) const override {{
    // Read shared facts through ctx.get<...>() and graphlint/ir/ValueFacts.h; never recompute them here.
{read_options}    if (!fires(n))
      return;
    sink.report(n, fmt::format("{{}}: {summary}{message_options}", nodeWithOp(n){message_args}))
        .note("how to fix it");
  }}

private:
  // The condition from the page's "What it checks".
  static bool fires(const Node &n) {{ return n.opType == "{probe_op}"; }}
}};

}}  // namespace

GRAPHLINT_DEFINE_RULE({cls})

}}  // namespace graphlint
"""

DOC_MD = """# {code} {name}

Default severity: {sev_lower}

## What it checks

{summary_cap}.
{options_doc}
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


def option_fields(a, cls):
    """The template fields an options struct adds (all empty without --option)."""
    if not a.option:
        return dict(options_struct="", options_table="", options_info="", ctx="", read_options="",
                    message_options="", message_args="", options_doc="")
    opts = []
    for name, default, lo, hi, help_ in a.option:
        if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
            fail(f"option '{name}': expected kebab-case")
        if any(c in help_ for c in '"\\\n|{}'):
            fail(f"option '{name}': help is one line, without quotes, backslashes, braces or '|'")
        d, lo_, hi_ = (number(default, f"option '{name}' default"), number(lo, f"option '{name}' min"),
                       number(hi, f"option '{name}' max"))
        if not lo_ <= d <= hi_:
            fail(f"option '{name}': default {default} is outside [{lo}, {hi}]")
        opts.append((name, field_name(name), d, lo_, hi_, help_))
    if len({o[0] for o in opts}) != len(opts):
        fail("an option is given twice")
    struct = f"\nstruct {cls}Options {{\n" + "".join(f"  double {f} = {shown(d)};\n" for _, f, d, *_ in opts) + "};\n"
    table = (f"  static constexpr RuleOption<{cls}Options> kOptions[] = {{\n" +
             "".join(f'      {{"{n}", &{cls}Options::{f}, {shown(lo)}, {shown(hi)}, "{h}"}},\n'
                     for n, f, _, lo, hi, h in opts) + "  };\n")
    doc = (f"\nOptions (`.graphlint.yaml`, `rules: {a.code}: {opts[0][0]}: {shown(opts[0][2])}`):\n\n"
           "| option | default | range | meaning |\n|---|---|---|---|\n" +
           "".join(f"| `{n}` | **{shown(d)}** | {shown(lo)} to {shown(hi)} | {h} |\n" for n, _, d, lo, hi, h in opts))
    return dict(options_struct=struct, options_table=table, options_info=", ruleOptionInfos<kOptions>",
                ctx="ctx", read_options=f"    const {cls}Options &o = ruleOptions<{cls}>(ctx);\n",
                message_options=" (" + ", ".join(f"{n} {{}}" for n, *_ in opts) + ")",
                message_args="".join(f", o.{f}" for _, f, *_ in opts), options_doc=doc,
                rows=[f"| {a.code} {a.name} | `{n}` | {shown(d)} | {shown(lo)} - {shown(hi)} | {h} |\n"
                      for n, _, d, lo, hi, h in opts])


def main():
    ap = argparse.ArgumentParser(description="Create a new graphlint rule's file, page, fixture and registry entry.")
    ap.add_argument("code", help="GLnnn, unused")
    ap.add_argument("name", help="kebab-case name, unused")
    ap.add_argument("summary", help="one line for `graphlint rules` (what fires, lower case, no final stop)")
    ap.add_argument("--severity", default="warning", choices=sorted(SEVERITIES))
    ap.add_argument("--probe-op", default="Relu",
                    help="the op the generated check and fixture start from (edit both afterwards)")
    ap.add_argument("--option", nargs=5, action="append", default=[], metavar=("NAME", "DEFAULT", "MIN", "MAX", "HELP"),
                    help="a numeric option (repeatable): a field of the rule's options struct, its YAML name, "
                         "default, range and one line of help")
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    a = ap.parse_args()

    root = pathlib.Path(a.root)
    if not re.fullmatch(r"GL\d{3}", a.code):
        fail(f"code '{a.code}': expected GL and three digits")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", a.name):
        fail(f"name '{a.name}': expected kebab-case (lower-case words joined by '-')")
    if '"' in a.summary or "\\" in a.summary or "\n" in a.summary:
        fail("summary: one line, without quotes or backslashes")
    registry = root / "src" / "rules" / "Rules.def"
    config_doc = root / "docs" / "configuration.md"
    cmake = root / "src" / "rules" / "CMakeLists.txt"
    for f in (registry, root / "docs" / "rules") + ((config_doc,) if a.option else ()):
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
    fields.update(option_fields(a, cls))
    fields["fixture"] = FIXTURE.format(**fields)
    rule_cpp = root / "src" / "rules" / f"{cls}.cpp"
    doc = root / "docs" / "rules" / f"{a.code}-{a.name}.md"
    fixture = root / "tests" / "fixtures" / "rules" / f"{a.code}-{a.name}.onnxtxt"
    for f in (rule_cpp, doc, fixture):
        if f.exists():
            fail(f"{f}: already exists")

    # The registry line, in code order.
    text = registry.read_text()
    entries = list(RULE_LINE.finditer(text))
    if not entries:
        fail(f"{registry}: the sorted list was not found")
    if any(e.group(2) == cls for e in entries):
        fail(f"{cls}: a rule of that class is already listed in {registry.name}")
    after = [e for e in entries if e.group(1) > a.code]
    pos = after[0].start() if after else entries[-1].end()
    text = text[:pos] + f"GRAPHLINT_RULE({a.code}, {cls})\n" + text[pos:]

    written = [rule_cpp, doc, fixture, registry]
    if a.option:
        # docs/configuration.md's option table, also kept in code order.
        conf = config_doc.read_text()
        rows = list(OPTION_ROW.finditer(conf))
        if not rows:
            fail(f"{config_doc}: the table of rule options was not found")
        later = [r for r in rows if r.group(0)[2:7] > a.code]
        at = later[0].start() if later else rows[-1].end()
        conf = conf[:at] + "".join(fields["rows"]) + conf[at:]
        written.append(config_doc)
    src = cmake.read_text()
    m = re.search(r"(graphlint_add_layer\(rules\n(?:  \S+\n)*?  \S+)\)", src)
    if not m:
        fail(f"{cmake}: the rules layer's source list was not found")
    src = src[:m.end(1)] + f"\n  {cls}.cpp" + src[m.end(1):]
    written.append(cmake)

    fixture.parent.mkdir(parents=True, exist_ok=True)
    rule_cpp.write_text(RULE_CPP.format(**fields))
    doc.write_text(DOC_MD.format(**fields))
    fixture.write_text(fields["fixture"])
    registry.write_text(text)
    cmake.write_text(src)
    if a.option:
        config_doc.write_text(conf)
    for f in written:
        print(f.relative_to(root))


if __name__ == "__main__":
    main()
