#!/bin/sh
# bin/graphlint-export of `cmake --install` (tools/CMakeLists.txt): runs the
# exporter package installed beside it (share/graphlint/python) with the
# python3 on PATH, which must have torch. A pip install has its own console
# script instead (pyproject.toml).
here=$(dirname "$(readlink -f "$0")")
PYTHONPATH="$here/../share/graphlint/python${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m graphlint.export "$@"
