"""`python -m graphlint.export` and the `graphlint-export` console script."""

import gc
import os
import sys

# The trace makes millions of short-lived objects and few cycles: the
# collector is off from the imports on (cli.run_export pauses it for an
# export made through the API).
gc.disable()

from .cli import main  # noqa: E402


def run():
    rc = main()
    # The output is written and closed: skip the interpreter's teardown of
    # the traced graph and its fake tensors (1.7 s of a Llama 7B capture).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


if __name__ == "__main__":
    run()
