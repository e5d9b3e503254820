"""`python -m graphlint ARGS` runs the graphlint binary with ARGS."""

import os
import sys

from ._binary import GraphlintError, binary_path


def main() -> int:
    try:
        path = binary_path()
    except GraphlintError as e:
        print(f"graphlint: {e}", file=sys.stderr)
        return 2
    os.execv(path, [path, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
