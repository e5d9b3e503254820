#!/usr/bin/env python3
"""Checks the layers of docs/ARCHITECTURE.md (Structure) against the build and
the sources. The build itself refuses an include across a wrong arrow (each
layer's library publishes only include/<LAYER>/ and links only the layers it
may use); this check covers what a compiler cannot see:

- the link graph of the CMake files (graphlint_add_layer, target_link_libraries)
  is the intended one, ALLOWED below: widening an arrow is a design change,
  made here and in the document, not only in a CMakeLists.txt;
- every `#include "graphlint/..."` names a header of a layer the including
  file's layer may use, and every relative include ("../onnx/X.h", which no
  include root stops) stays in the file's layer or one it may use;
- every source belongs to a layer: a file's layer is the library whose
  graphlint_add_layer list names it, a header's the include/<LAYER>/ root
  it sits in, a private header's that of the sources beside it.

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
    "import": {"ir", "onnx", "fx"},
    "base": {"ir"},
    "analyses": {"ir", "base"},
    "rules": {"ir", "base", "analyses"},
    "engine": {"ir", "onnx", "fx", "import", "base", "analyses", "rules"},
    "report": {"ir", "onnx", "fx", "import", "base", "analyses", "rules", "engine"},
    "verify": {"ir", "onnx", "fx", "import", "base", "analyses", "rules", "engine", "report"},
}
ALLOWED["cli"] = set(ALLOWED)

# Folders of sources outside every layer's library, and their layer.
OTHER_SOURCES = {"tools": "cli"}

SOURCE_TOPS = ("ir", "lint", "rules", "tools")
EXTENSIONS = (".cpp", ".h", ".cu", ".inc")


def cmake_files(root):
    for top in SOURCE_TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            if "CMakeLists.txt" in files:
                path = os.path.join(dirpath, "CMakeLists.txt")
                with open(path, encoding="utf-8") as fh:
                    yield dirpath, re.sub(r"#[^\n]*", "", fh.read())


def read_build(root):
    """(source file -> layer, layer -> the layers its CMake links)."""
    sources, links = {}, {}
    for dirpath, text in cmake_files(root):
        for m in re.finditer(r"graphlint_add_layer\(\s*(\w+)([^)]*)\)", text):
            layer = m.group(1)
            links.setdefault(layer, {})
            for src in m.group(2).split():
                sources[os.path.relpath(os.path.join(dirpath, src), root)] = layer
        for m in re.finditer(r"target_link_libraries\(\s*graphlint_(\w+)([^)]*)\)", text):
            scope = "PUBLIC"
            for word in m.group(2).split():
                if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    scope = word
                elif word.startswith("graphlint_"):
                    links.setdefault(m.group(1), {})[word[len("graphlint_"):]] = scope
    return sources, links


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


def header_layers(root):
    """'graphlint/lint/Setup.h' -> 'base', from include/<LAYER>/graphlint/."""
    out = {}
    for layer in sorted(os.listdir(os.path.join(root, "include"))):
        base = os.path.join(root, "include", layer)
        for dirpath, _, files in os.walk(base):
            for f in files:
                out[os.path.relpath(os.path.join(dirpath, f), base)] = layer
    return out


def layer_of(rel, sources, dirs):
    if rel in sources:
        return sources[rel]
    parts = rel.split(os.sep)
    if parts[0] == "include" and len(parts) > 2:
        return parts[1]
    d = os.path.dirname(rel)
    while d:
        if d in dirs:
            return dirs[d]
        d = os.path.dirname(d)
    return OTHER_SOURCES.get(parts[0])


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    sources, links = read_build(root)
    problems = []

    built = visible(links)
    for layer in sorted(set(built) | set(ALLOWED) - {"cli"}):
        have, want = built.get(layer), ALLOWED.get(layer)
        if have is None or want is None:
            problems.append(f"layer {layer}: in {'ALLOWED' if have is None else 'the CMake files'} only")
        elif have != want:
            extra, missing = sorted(have - want), sorted(want - have)
            problems.append(f"layer {layer}: the CMake files let it use {', '.join(extra) or 'nothing more'}"
                            f"{' and not ' + ', '.join(missing) if missing else ''} beyond ALLOWED")

    # A folder's layer: that of the sources it holds, when they agree.
    dirs = {}
    for src, layer in sources.items():
        d = os.path.dirname(src)
        dirs[d] = layer if dirs.get(d, layer) == layer else None
    headers = header_layers(root)
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for top in SOURCE_TOPS + ("include",):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(EXTENSIONS):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                src = layer_of(rel, sources, dirs)
                if src is None:
                    problems.append(f"{rel}: no layer (list it in its layer's CMakeLists.txt)")
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        name = m.group(1)
                        if name.startswith("graphlint/"):
                            dst = headers.get(name)
                            if dst is None:
                                problems.append(f"{rel}:{n}: {name} is in no include/<layer>/ root")
                                continue
                        else:
                            target = os.path.normpath(os.path.join(os.path.dirname(rel), name))
                            if not os.path.exists(os.path.join(root, target)):
                                continue  # a generated file (HardwareYaml.inc) or a system header
                            dst = layer_of(target, sources, dirs)
                        if dst is not None and dst != src and dst not in ALLOWED[src]:
                            problems.append(f"{rel}:{n}: {src} -> {dst} ({name})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s); the layers are in docs/ARCHITECTURE.md (Structure)")
        return 1
    print(f"layers ok: {len(ALLOWED) - 1} layers, {len(sources)} sources, {len(headers)} public headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
