"""Models for the ONNX-vs-FX rule parity test (tests/parity/check_parity.py).

Each case is one small PyTorch model built to raise a rule that both an ONNX
export and a graphlint-export FX graph can express. The test exports each
model both ways, lints both with the same setup flags, and requires the same
set of codes from both (over the comparable rules) and every code the case
expects. Sizes are symbols (`batch`) bound with -D, so the models export
small and are linted at the size that matters.
"""
import torch
import torch.nn as nn


class DtypeIsland(nn.Module):
    """A half-precision island between float32 compute: GL101 at both casts."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.head = nn.Linear(64, 64)

    def forward(self, x):
        h = self.fc(x)
        low = h.half()
        sq = low * low  # computed in f16
        return self.head(sq.float())


class PromotedBack(nn.Module):
    """`h.half() * scale` with an f32 scale: rounds h to f16, computes in f32.
    ONNX writes the promotion as a second Cast; both are a rounding round trip: GL102."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.scale = nn.Parameter(torch.ones(64))

    def forward(self, x):
        h = torch.relu(self.fc(x))
        mixed = h.half() * self.scale
        return torch.tanh(mixed)


class CastChain(nn.Module):
    """A float32 -> float16 -> float32 round trip that changes nothing but precision: GL102."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        back = h.half().float()
        return self.fc(back)


class DataDependent(nn.Module):
    """A nonzero whose row count sizes a matmul: GL112 (host sync) and GL123 (data-dependent shape)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.head = nn.Linear(64, 32)

    def forward(self, x):
        h = self.fc(x)
        rows = (h[:, 0] > 0).nonzero()[:, 0]
        picked = h.index_select(0, rows)
        return self.head(picked)


class Misaligned(nn.Module):
    """Contractions whose K and N are not tensor-core multiples: GL141."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1001, 1003)
        self.fc2 = nn.Linear(1003, 513)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class TinyKernels(nn.Module):
    """Many tiny matmuls in a row, each far shorter than a launch: GL142."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(16, 16) for _ in range(8))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class WideMlp(nn.Module):
    """Large activations and 64 MiB weight matrices: GL201 and GL202 at a large batch,
    GL301 and GL302 in data-parallel training."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(4096, 4096)
        self.mid = nn.Linear(4096, 4096)
        self.down = nn.Linear(4096, 1024)

    def forward(self, x):
        h = torch.relu(self.up(x))
        h = torch.relu(self.mid(h))
        return self.down(h)


class Branch(nn.Module):
    """torch.cond on a data-dependent predicate: GL121 (torch 2.x: ONNX If from the
    dynamo exporter, higher_order::cond from graphlint-export)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)

    def forward(self, x):
        h = self.fc(x)
        return torch.cond(h.sum() > 0, lambda t: torch.relu(t), lambda t: torch.tanh(t), (h,))


# name -> (factory, inputs, dims, graphlint setup flags, expected codes, train)
# inputs: (name, dtype, dims) with dims symbol names or sizes; dims: the
# export-time size of each symbol (the test binds the lint-time size with -D).
CASES = {
    "dtype_island": dict(factory=DtypeIsland, inputs=[("x", torch.float32, ["batch", 64])],
                         export_dims={"batch": 4}, lint_dims={"batch": 4}, flags=[], expect=["GL101"]),
    "promoted_back": dict(factory=PromotedBack, inputs=[("x", torch.float32, ["batch", 64])],
                          export_dims={"batch": 4}, lint_dims={"batch": 4}, flags=[], expect=["GL102"]),
    "cast_chain": dict(factory=CastChain, inputs=[("x", torch.float32, ["batch", 64])],
                       export_dims={"batch": 4}, lint_dims={"batch": 4}, flags=[], expect=["GL102"]),
    "data_dependent": dict(factory=DataDependent, inputs=[("x", torch.float32, ["batch", 64])],
                           export_dims={"batch": 8}, lint_dims={"batch": 8}, flags=[],
                           expect=["GL112", "GL123"]),
    "misaligned": dict(factory=Misaligned, inputs=[("x", torch.float32, ["batch", 1001])],
                       export_dims={"batch": 4}, lint_dims={"batch": 4096}, flags=["--precision", "bf16-mixed"],
                       expect=["GL141"]),
    "tiny_kernels": dict(factory=TinyKernels, inputs=[("x", torch.float32, ["batch", 16])],
                         export_dims={"batch": 4}, lint_dims={"batch": 4}, flags=[], expect=["GL142"]),
    "wide_mlp_memory": dict(factory=WideMlp, inputs=[("x", torch.float32, ["batch", 4096])],
                            export_dims={"batch": 4}, lint_dims={"batch": 262144},
                            flags=["--train", "--optimizer", "adam", "--target", "L4"],
                            expect=["GL201", "GL202"]),
    "wide_mlp_ddp": dict(factory=WideMlp, inputs=[("x", torch.float32, ["batch", 4096])],
                         export_dims={"batch": 4}, lint_dims={"batch": 8},
                         flags=["--train", "--optimizer", "adam", "--world-size", "64",
                                "--target", "A100-80GB"],
                         expect=["GL301", "GL302"]),
    "cond_branch": dict(factory=Branch, inputs=[("x", torch.float32, ["batch", 64])],
                        export_dims={"batch": 4}, lint_dims={"batch": 4}, flags=[], expect=["GL121"],
                        onnx_exporter="dynamo"),
}
