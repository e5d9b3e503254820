"""graphlint-export: write a PyTorch model's aten-level FX graph as graphlint JSON.

    graphlint-export MODEL.py -o OUT.fx.json [--train [--loss-output NAME]] [--dim NAME=SIZE ...] [--dynamic INPUT:DIM=NAME ...]
    graphlint-export --model pkg.module:factory --input 'input_ids:int64[batch,seq]' --dim batch=8 --dim seq=2048 -o OUT.fx.json
                     [--device cuda] [--capture fake|real|export] [--module-mode eval|train] [--repeated-blocks auto|off]

MODEL.py defines `model()` returning an nn.Module and `example_inputs()`
returning a tuple of tensors; `--model` names any importable factory, and
`--input` gives the inputs as shapes. By default nothing is computed: the
module is built on the meta device, its weights and the inputs are fake
tensors, and make_fx traces the graph (torch 2.x: with symbolic sizes, so
dims are expressions such as batch*seq). `--train` traces the joint forward +
backward graph in train() mode and marks the forward tensors autograd saves
for backward. Every op records its schema's alias facts, its output tensors'
meta, the nn.Module path and the user's source line, relative to the user's
repository root. A model whose nn.ModuleList repeats one block 4 or more
times (decoder layers) is traced cut to 2 and 3 blocks and written in full
from them, the same file as a full trace (--repeated-blocks off traces all).

The file format is versioned and documented in docs/fx-format.md. Run with a
Python that has torch: Debian's /usr/bin/python3 (torch 1.13) or a torch 2.x venv.
"""

# The format this exporter writes (docs/fx-format.md) and its own version:
# constants without torch, so `graphlint` checks them before capturing.
FORMAT_NAME = "graphlint-fx"
FORMAT_VERSION = 2
EXPORTER_VERSION = "2.0"
