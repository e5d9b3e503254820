"""The truth set (tests/truth/run_truth.py): small PyTorch patterns around
in-place writes, views, slices, index_put, out=, saved tensors, custom
autograd functions, checkpointing and host syncs. Each pattern is a function
`f(m, x)` run as the forward of a tiny module `m` (two Linears, a weight
vector, two convolutions, a LayerNorm and a BatchNorm); nothing here says what
a pattern should trigger: run_truth.py measures that by executing it.

A pattern whose name starts with `img_` takes an image batch (2, 4, 6, 6);
the others a (4, 8) matrix."""

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

TORCH2 = int(torch.__version__.split(".")[0]) >= 2
PATTERNS = {}


def pattern(f):
    PATTERNS[f.__name__] = f
    return f


class Base(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.lin = torch.nn.Linear(8, 8)
        self.lin2 = torch.nn.Linear(8, 8)
        self.w = torch.nn.Parameter(torch.randn(8))
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.ln = torch.nn.LayerNorm(8)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.fn(self, x)


def inputs(name):
    g = torch.Generator().manual_seed(0)
    if name.startswith("img_"):
        return (torch.randn(2, 4, 6, 6, generator=g),)
    return (torch.randn(4, 8, generator=g),)


def _ckpt(fn, *args):
    if TORCH2:
        return checkpoint(fn, *args, use_reentrant=False)
    return checkpoint(fn, *args)


# --- saved outputs (sigmoid, tanh, exp, relu, softmax) overwritten --------

@pattern
def sigmoid_out_mul_(m, x):
    s = torch.sigmoid(m.lin(x))
    s.mul_(2)
    return s.sum()


@pattern
def tanh_out_add_(m, x):
    t = torch.tanh(m.lin(x))
    t.add_(1)
    return t.sum()


@pattern
def exp_out_add_(m, x):
    e = torch.exp(m.lin(x))
    e.add_(1)
    return e.sum()


@pattern
def relu_out_add_(m, x):
    r = F.relu(m.lin(x))
    r.add_(1)
    return r.sum()


@pattern
def softmax_out_mul_(m, x):
    p = torch.softmax(m.lin(x), dim=-1)
    p.mul_(2)
    return p.sum()


@pattern
def softmax_then_dropout_inplace(m, x):
    p = torch.softmax(m.lin(x), dim=-1)
    p = F.dropout(p, 0.5, training=True, inplace=True)
    return p.sum()


@pattern
def sigmoid_out_view_write(m, x):
    s = torch.sigmoid(m.lin(x))
    s.view(-1).mul_(2)
    return s.sum()


@pattern
def sigmoid_out_unsqueeze_write(m, x):
    s = torch.sigmoid(m.lin(x))
    s.unsqueeze(0).add_(1)
    return s.sum()


@pattern
def tanh_out_setitem_index(m, x):
    t = torch.tanh(m.lin(x))
    t[torch.tensor([0, 2])] = 0.0
    return t.sum()


@pattern
def tanh_out_masked_fill_(m, x):
    t = torch.tanh(m.lin(x))
    t.masked_fill_(x > 0, 0.0)
    return t.sum()


@pattern
def sigmoid_out_detach_write(m, x):
    s = torch.sigmoid(m.lin(x))
    s.detach().mul_(2)
    return s.sum()


@pattern
def sigmoid_out_clone_write(m, x):
    s = torch.sigmoid(m.lin(x))
    c = s.clone()
    c.mul_(2)
    return (s + c).sum()


# --- saved inputs (matmul, linear, conv, norms, mul, pow) overwritten ------

@pattern
def linear_input_after_write(m, x):
    h = m.lin(x)
    y = m.lin2(h)
    h.add_(1)
    return (y + h).sum()


@pattern
def linear_input_setitem_before(m, x):
    h = m.lin(x)
    h[:, 0] = 0.0
    return m.lin2(h).sum()


@pattern
def linear_input_setitem_after(m, x):
    h = m.lin(x)
    y = m.lin2(h)
    h[:, 0] = 0.0
    return (y + h).sum()


@pattern
def matmul_input_mul_(m, x):
    h = m.lin(x)
    y = h @ m.lin2.weight
    h.mul_(2)
    return (y + h).sum()


@pattern
def matmul_output_add_(m, x):
    y = m.lin(x) @ m.lin2.weight
    y.add_(1)
    return y.sum()


@pattern
def mul_param_input_write(m, x):
    h = m.lin(x)
    y = h * m.w
    h.add_(1)
    return (y + h).sum()


@pattern
def mul_scalar_input_write(m, x):
    h = m.lin(x)
    y = h * 2.0
    h.add_(1)
    return (y + h).sum()


@pattern
def add_output_mul_(m, x):
    y = m.lin(x) + 1.0
    y.mul_(2)
    return y.sum()


@pattern
def layernorm_input_write(m, x):
    h = m.lin(x) * 2.0
    y = m.ln(h)
    h.add_(1)
    return (y + h).sum()


@pattern
def layernorm_output_write(m, x):
    y = m.ln(m.lin(x))
    y.add_(1)
    return y.sum()


@pattern
def pow_input_write(m, x):
    h = m.lin(x)
    y = h.pow(2)
    h.add_(1)
    return (y + h).sum()


@pattern
def norm_input_write(m, x):
    h = m.lin(x)
    n = h.norm(dim=-1)
    h.add_(1)
    return (n.sum() + h.sum())


@pattern
def gelu_input_write(m, x):
    h = m.lin(x)
    g = F.gelu(h)
    h.add_(1)
    return (g + h).sum()


@pattern
def gelu_output_write(m, x):
    g = F.gelu(m.lin(x))
    g.add_(1)
    return g.sum()


@pattern
def silu_output_write(m, x):
    s = F.silu(m.lin(x))
    s.mul_(2)
    return s.sum()


@pattern
def clamp_saved_mul_input(m, x):
    h = m.lin(x)
    y = h * m.w
    h.clamp_(-1, 1)
    return (y + h).sum()


@pattern
def cat_input_write(m, x):
    h = m.lin(x)
    c = torch.cat([h, x], dim=1)
    h.add_(1)
    return (c.sum() + h.sum())


@pattern
def sum_input_write(m, x):
    h = m.lin(x)
    s = h.sum()
    h.mul_(2)
    return s + h.sum()


@pattern
def base_write_view_saved(m, x):
    h = m.lin(x)
    v = h[:, :4]
    y = v * m.w[:4]
    h.add_(1)
    return (y.sum() + h.sum())


@pattern
def relu_inplace_on_slice(m, x):
    out = m.lin(x)
    half = out.shape[1] // 2
    F.relu(out[:, :half], inplace=True)
    return out.sum()


@pattern
def sigmoid_inplace_fresh(m, x):
    s = m.lin(x).sigmoid_()
    return (s * m.w).sum()


@pattern
def exp_inplace_then_mul(m, x):
    e = m.lin(x).exp_()
    return (e * m.w).sum()


@pattern
def dropout_output_write(m, x):
    d = F.dropout(m.lin(x), 0.5, training=True)
    d.mul_(2)
    return d.sum()


@pattern
def index_put_before_use(m, x):
    h = m.lin(x)
    h[torch.tensor([1, 3])] = 0.0
    return m.lin2(h).sum()


@pattern
def out_kwarg_on_saved(m, x):
    c = x.exp()
    y = m.w * c
    torch.add(x, 1.0, out=c)
    return y.sum()


@pattern
def out_kwarg_fresh_mask(m, x):
    mask = torch.empty(4, 8)
    torch.gt(x, 0, out=mask)
    return (m.lin(x) * mask).sum()


@pattern
def input_mul_(m, x):
    x.mul_(2)
    return m.lin(x).sum()


@pattern
def transpose_write_read_base(m, x):
    h = m.lin(x)
    h.t().add_(1)
    return m.lin2(h).sum()


@pattern
def fresh_buffer_slice_copy(m, x):
    h = m.lin(x)
    buf = h.new_zeros(4, 16)
    buf[:, :8].copy_(h)
    return buf.sum()


@pattern
def scatter_into_zeros(m, x):
    h = m.lin(x)
    z = torch.zeros(4, 8)
    z = z.scatter(1, torch.zeros(4, 1, dtype=torch.long), h[:, :1])
    return z.sum()


# --- convolutions and batch norm ------------------------------------------

@pattern
def img_conv_input_relu_(m, x):
    h = m.conv(x)
    y = m.conv2(h)
    h.relu_()
    return (y + h).sum()


@pattern
def img_conv_bn_relu_inplace(m, x):
    return F.relu(m.bn(m.conv(x)), inplace=True).sum()


@pattern
def img_bn_input_write(m, x):
    h = m.conv(x)
    y = m.bn(h)
    h.add_(1)
    return (y + h).sum()


@pattern
def img_residual_add_inplace(m, x):
    h = F.relu(m.bn(m.conv(x)))
    out = m.conv2(h)
    out += x
    return F.relu(out, inplace=True).sum()


# --- custom autograd functions and checkpointing --------------------------

class SaveInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 + 0 * x


class SaveOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3


@pattern
def custom_fn_saved_input_write(m, x):
    h = m.lin(x)
    y = SaveInput.apply(h)
    h.add_(1)
    return (y + h).sum()


@pattern
def custom_fn_saved_output_write(m, x):
    y = SaveOutput.apply(m.lin(x))
    y.mul_(2)
    return y.sum()


@pattern
def custom_fn_nothing_saved_write(m, x):
    h = m.lin(x)
    y = Scale.apply(h)
    h.add_(1)
    return (y + h).sum()


@pattern
def checkpoint_block_output_write(m, x):
    y = _ckpt(lambda h: F.gelu(m.lin2(h)), m.lin(x))
    y.add_(1)
    return y.sum()


@pattern
def checkpoint_inner_saved_write(m, x):
    def block(h):
        s = torch.sigmoid(m.lin2(h))
        s.mul_(2)
        return s
    return _ckpt(block, m.lin(x)).sum()


# --- host syncs and their look-alikes -------------------------------------

@pattern
def sync_item(m, x):
    n = x.abs().sum().item()
    return (m.lin(x) * n).sum()


@pattern
def sync_float(m, x):
    n = float(x.max())
    return (m.lin(x) / n).sum()


@pattern
def sync_nonzero(m, x):
    idx = torch.nonzero(x[:, 0] > 0)
    return m.lin(x).sum() + idx.shape[0]


@pattern
def sync_bool_mask_index(m, x):
    h = m.lin(x)
    return h[x > 0].sum()


@pattern
def sync_masked_select(m, x):
    return torch.masked_select(m.lin(x), x > 0).sum()


@pattern
def sync_tolist(m, x):
    rows = x.argmax(dim=1).tolist()
    return m.lin(x)[:, rows[0]].sum()


@pattern
def sync_if_tensor(m, x):
    h = m.lin(x)
    if x.sum() > 0:
        h = h * 2
    return h.sum()


@pattern
def sync_print(m, x):
    h = m.lin(x)
    print("truth-set debug print:", h.sum())
    return h.sum()


@pattern
def sync_unique(m, x):
    u = torch.unique(x.argmax(dim=1))
    return m.lin(x).sum() + u.shape[0]


@pattern
def nosync_where(m, x):
    return torch.where(x > 0, m.lin(x), torch.zeros_like(x)).sum()


@pattern
def nosync_masked_fill(m, x):
    return m.lin(x).masked_fill(x < 0, 0.0).sum()


@pattern
def nosync_shape_arith(m, x):
    h = m.lin(x)
    return h.view(x.shape[0] * 2, -1).sum()


@pattern
def nosync_argmax_gather(m, x):
    h = m.lin(x)
    i = h.argmax(dim=1, keepdim=True)
    return h.gather(1, i).sum()


@pattern
def nosync_index_select(m, x):
    return m.lin(x).index_select(0, torch.tensor([0, 2])).sum()
