#!/usr/bin/env python3
"""Checks the layers of docs/ARCHITECTURE.md (Structure) against the build and
the sources. A file's layer is read from its path: src/<LAYER>/... and
include/graphlint/<LAYER>/... belong to LAYER, tools/ to the CLI. The build
itself refuses an include across a wrong arrow (each layer's library publishes
only its own include/graphlint/<LAYER>/ and links only the layers it may use);
this check covers what a compiler cannot see:

- the link graph of the CMake files (graphlint_add_layer, target_link_libraries)
  is the intended one, ALLOWED below: widening an arrow is a design change,
  made here and in the document, not only in a CMakeLists.txt;
- each layer is built from its own folder: graphlint_add_layer(LAYER ...) sits
  in src/LAYER/ and lists only sources below it, and every folder of src/ is
  a layer;
- every `#include "graphlint/<LAYER>/X.h"` names an existing header of a layer
  the including file's layer may use, and every relative include ("../onnx/X.h",
  which no include root stops) stays in the file's layer or one it may use.

Exits 1 listing each problem (FILE:LINE: LAYER -> LAYER (HEADER)); run by CTest
(layer_includes).

  scripts/check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

# Which layers each layer may use (besides itself): the layers it links and
# those their public headers expose. The CLI uses every layer.
ALLOWED = {
    "ir": set(),
    "onnx": {"ir"},
    "fx": {"ir"},
    "pt2": {"ir"},
    "import": {"ir", "onnx", "fx", "pt2"},
    "base": {"ir"},
    "analyses": {"ir", "base"},
    "rules": {"ir", "base", "analyses"},
    "engine": {"ir", "onnx", "fx", "pt2", "import", "base", "analyses", "rules"},
    "report": {"ir", "onnx", "fx", "pt2", "import", "base", "analyses", "rules", "engine"},
    "verify": {"ir", "onnx", "fx", "pt2", "import", "base", "analyses", "rules", "engine", "report"},
}
ALLOWED["cli"] = set(ALLOWED)

SOURCE_TOPS = ("src", "include", "tools")
EXTENSIONS = (".cpp", ".h", ".cu", ".inc")


def layer_of(rel):
    """A repository-relative path's layer, from the path alone (None: none)."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "graphlint"] and len(parts) > 3:
        return parts[2]
    if parts[0] == "tools":
        return "cli"
    return None


def read_build(root, problems):
    """layer -> {linked layer: scope}, checking each layer is built from its folder."""
    links = {}
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        if "CMakeLists.txt" not in files:
            continue
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as fh:
            text = re.sub(r"#[^\n]*", "", fh.read())
        for m in re.finditer(r"graphlint_add_layer\(\s*(\w+)([^)]*)\)", text):
            layer = m.group(1)
            links.setdefault(layer, {})
            if layer_of(rel_dir + "/x") != layer:
                problems.append(f"{rel_dir}/CMakeLists.txt: layer {layer} is built outside src/{layer}/")
            for src in m.group(2).split():
                if layer_of(os.path.normpath(os.path.join(rel_dir, src)).replace(os.sep, "/")) != layer:
                    problems.append(f"{rel_dir}/CMakeLists.txt: {src} is outside src/{layer}/")
        for m in re.finditer(r"target_link_libraries\(\s*graphlint_(\w+)([^)]*)\)", text):
            scope = "PUBLIC"
            for word in m.group(2).split():
                if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    scope = word
                elif word.startswith("graphlint_"):
                    links.setdefault(m.group(1), {})[word[len("graphlint_"):]] = scope
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if os.path.isdir(os.path.join(root, "src", d)) and d not in links:
            problems.append(f"src/{d}/: no graphlint_add_layer({d} ...) builds it")
    for d in sorted(os.listdir(os.path.join(root, "include", "graphlint"))):
        if d not in links:
            problems.append(f"include/graphlint/{d}/: headers of no layer")
    return links


def visible(links):
    """Per layer, the layers whose headers its sources see: those it links,
    and, through them, what they link PUBLIC."""
    def exported(layer, seen):
        for dep, scope in links.get(layer, {}).items():
            if scope == "PUBLIC" and dep not in seen:
                seen.add(dep)
                exported(dep, seen)
        return seen
    out = {}
    for layer, deps in links.items():
        seen = set(deps)
        for dep in deps:
            exported(dep, seen)
        out[layer] = seen - {layer}
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    links = read_build(root, problems)

    built = visible(links)
    for layer in sorted(set(built) | set(ALLOWED) - {"cli"}):
        have, want = built.get(layer), ALLOWED.get(layer)
        if have is None or want is None:
            problems.append(f"layer {layer}: in {'ALLOWED' if have is None else 'the CMake files'} only")
        elif have != want:
            extra, missing = sorted(have - want), sorted(want - have)
            problems.append(f"layer {layer}: the CMake files let it use {', '.join(extra) or 'nothing more'}"
                            f"{' and not ' + ', '.join(missing) if missing else ''} beyond ALLOWED")

    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    sources = headers = 0
    for top in SOURCE_TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(EXTENSIONS):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                src = layer_of(rel)
                if src is None or src not in ALLOWED:
                    problems.append(f"{rel}: in no layer's folder (src/<layer>/, include/graphlint/<layer>/)")
                    continue
                headers += top == "include"
                sources += top != "include"
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        name = m.group(1)
                        if name.startswith("graphlint/"):
                            dst = layer_of("include/" + name)
                            if not os.path.isfile(os.path.join(root, "include", name)):
                                problems.append(f"{rel}:{n}: {name} is no header of include/graphlint/<layer>/")
                                continue
                        else:
                            target = os.path.normpath(os.path.join(os.path.dirname(rel), name)).replace(os.sep, "/")
                            if not os.path.exists(os.path.join(root, target)):
                                continue  # a generated file (HardwareYaml.inc) or a system header
                            dst = layer_of(target)
                        if dst is not None and dst != src and dst not in ALLOWED[src]:
                            problems.append(f"{rel}:{n}: {src} -> {dst} ({name})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s); the layers are in docs/ARCHITECTURE.md (Structure)")
        return 1
    print(f"layers ok: {len(ALLOWED) - 1} layers, {sources} sources, {headers} public headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
