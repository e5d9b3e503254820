"""From the command line to a traced Capture: build the module (on meta,
or for real with --capture real), make its state and the inputs fake with
the requested symbolic dims, and trace with make_fx or torch.export."""

import inspect
import os
import traceback

import torch

from .fx_build import CallInputs, ExportError, MetaInit, fake_like, meta_construction, real_input, state_tensors
from .fx_capture import TORCH2, trace_export, trace_make_fx
from .fx_causal_skip import EagerCausalSkip
from .fx_moe import name_counts
from .fx_source import is_user_file
from .fx_symbols import SizeNamer, Symbols


def _where(exc, fallback, source):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_user_file(f.filename)]
    if frames:
        return f"{source.display_path(frames[-1].filename)}:{frames[-1].lineno}"
    return source.display_path(fallback)


def _first(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class Prepared:
    """The module and its inputs, ready to trace, and what each trace of
    them shares: the user's files (`source`, fx_source.UserSource), the
    symbolic dims, the diagnostics."""

    def __init__(self, factory, example_inputs, model_file, args, capture, source):
        self.args, self.capture_kind = args, capture
        self.source = source
        self.diagnostics = []
        self.model_file = model_file
        self.fake_mode, self.shape_env = None, None
        self.simulate = None
        init = MetaInit()
        if capture == "real":
            self.module = self._call(factory, "model()", model_file, real=True)
            raw = self._raw_inputs(example_inputs, real=True)
        else:
            with meta_construction(init):
                self.module = self._call(factory, "model()", model_file, real=False)
                raw = self._raw_inputs(example_inputs, real=False)
        if not isinstance(self.module, torch.nn.Module):
            raise ExportError(f"{source.display_path(model_file)}: model() must return an nn.Module, "
                              f"not {type(self.module).__name__}")
        _check_keywords(self.module, raw, self.given_by)
        self.param_count = sum(p.numel() for p in self.module.parameters())
        wants_cuda = args.device == "cuda" or init.wants_cuda
        if wants_cuda and (capture != "real" or not torch.cuda.is_available()):
            self.simulate = "cuda:0"
        elif wants_cuda:
            self.module, raw = self.module.cuda(), [(n, t.cuda(), kw) for n, t, kw in raw]
        self.raw = raw
        self.namer = None
        self.tracer = ""
        self.blocks = None        # fx_blocks: a factory of BlockMarks, for the repeated-block traces
        self._faked = []          # (module, attribute, meta tensor) that _fake replaced, for restore_attributes
        self.cache_configs = None # [(module path, config class)] whose use_cache _cache_off turned off

    def _call(self, fn, what, model_file, real):
        try:
            return fn()
        except ExportError:
            raise
        except Exception as e:
            if os.environ.get("GRAPHLINT_EXPORT_DEBUG"):
                raise
            hint = "" if real else (" (the model is built on the meta device, without real weights; "
                                    "--capture real builds it for real)")
            raise ExportError(f"{_where(e, model_file, self.source)}: {what} failed{hint}: {type(e).__name__}: {_first(e)}")

    def _raw_inputs(self, example_inputs, real):
        """[(name, tensor or meta tensor, is_keyword)], from --input or example_inputs()."""
        args = self.args
        self.given_by = "--input"   # how the inputs were given, for messages
        if args.inputs:
            sizes = dict(args.dim)
            out = []
            for spec in args.inputs:
                try:
                    shape = spec.sizes(sizes)
                except ValueError as e:
                    raise ExportError(str(e))
                t = real_input(spec, shape) if real else torch.empty(shape, dtype=spec.dtype, device="meta")
                out.append((spec.name, t, not spec.name.startswith("input") or not spec.name[5:].isdigit()))
            return out
        got = self._call(example_inputs, "example_inputs()", self.model_file, real)
        # A dict: keyword arguments of forward() (input_ids=..., labels=...).
        self.given_by = "example_inputs()"
        if isinstance(got, CallInputs):
            positional, keywords = got.args, got.kwargs
            self.given_by = "kwargs"
        elif isinstance(got, dict):
            positional, keywords = (), got
        else:
            positional, keywords = tuple(got) if isinstance(got, (tuple, list)) else (got,), {}
        bad = [f"input{i}" for i, t in enumerate(positional) if not isinstance(t, torch.Tensor)]
        bad += [str(k) for k, t in keywords.items() if not isinstance(k, str) or not isinstance(t, torch.Tensor)]
        if bad:
            raise ExportError(f"{self.source.display_path(self.model_file)}: example_inputs() must return a tuple of tensors "
                              f"or a dict of keyword tensors ({', '.join(bad)} is not a tensor)")
        return [(f"input{i}", t, False) for i, t in enumerate(positional)] + [(k, t, True) for k, t in keywords.items()]

    # ------------------------------------------------------------------
    # Symbolic dims: which input dim is which symbol
    # ------------------------------------------------------------------

    def dim_names(self):
        """{(input name, dim): symbol} from --input names, --dynamic and, with
        example_inputs(), --dim NAME=SIZE matched against the inputs' sizes."""
        args = self.args
        named = {}
        for spec in args.inputs:
            for d, sym in enumerate(spec.symbols()):
                if sym is not None:
                    named[(spec.name, d)] = sym
        names = {n for n, _, _ in self.raw}
        for inp, d, sym in args.dynamic:
            t = next((t for n, t, _ in self.raw if n == inp), None)
            if t is None:
                raise ExportError(f"--dynamic {inp}:{d}={sym}: no input '{inp}' (inputs: {', '.join(sorted(names))})")
            if d >= t.dim():
                raise ExportError(f"--dynamic {inp}:{d}={sym}: {inp} has {t.dim()} dims {list(t.shape)}")
            named[(inp, d)] = sym
        if not args.inputs:
            small = [f"{name}={size}" for name, size in args.dim if size < 2]
            if small:
                raise ExportError(f"--dim {small[0]}: with example_inputs() dims are matched by size, and sizes 0 "
                                  f"and 1 are everywhere; use --dynamic INPUT:DIM=NAME or --input")
            by_size = {size: name for name, size in args.dim}
            for n, t, _ in self.raw:
                for d, size in enumerate(t.shape):
                    if int(size) in by_size and (n, d) not in named:
                        named[(n, d)] = by_size[int(size)]
        used = set(named.values())
        shapes = ", ".join(f"{n} {list(t.shape)}" for n, t, _ in self.raw)
        for name, size in args.dim:
            if name not in used:
                self.diagnostics.append({"kind": "dim-unbound", "message": f"--dim {name}={size} binds no input dim "
                                         f"(inputs: {shapes}); it is ignored"})
        return named

    # ------------------------------------------------------------------
    # Tracing
    # ------------------------------------------------------------------

    def capture(self):
        args = self.args
        named = self.dim_names()
        train = args.train or args.module_mode == "train"
        self._cache_off()
        if self.capture_kind == "export":
            return self._export(named, train)
        if self.capture_kind == "real":
            self.namer = SizeNamer([(sym, int(t.shape[d])) for (n, d), sym in named.items()
                                    for name, t, _ in self.raw if name == n])
            self.tracer = "make_fx (real tensors)"
            state, aliases = state_tensors(self.module)
            inputs = self.raw
        else:
            state, aliases, inputs = self._fake(named)
        with EagerCausalSkip(self.module) as causal:
            cap = trace_make_fx(self.module, state, aliases, inputs, args.train, train, self.fake_mode,
                                self.simulate, self.blocks, getattr(args, "loss_output", None), self.source)
        self.diagnostics += causal.diagnostics()
        if cap.expert_rows:
            name_counts(self.namer, cap.expert_rows)
        for sym, rows in cap.enumerated.items():
            self.namer.defaults[sym] = {"default": str(rows), "hint": rows, "assumption": f"every element of the "
                                        f"{rows} nonzero() read was nonzero: the loop over its rows was traced "
                                        f"once per index"}
        if self.shape_env is not None:
            for name, value in self.namer.specialised():
                self.diagnostics.append({"kind": "dim-specialised", "message": f"dim '{name}' was specialised to "
                                         f"{value} by the trace (a guard on its size, such as x.shape[0] == 8): "
                                         f"it is written as the number"})
            for dims, guard, (file, line, func) in self.namer.off_path():
                self.diagnostics.append({"kind": "dim-traced-larger", "message": f"dim {dims} was traced at size "
                                         f"{Symbols.TRACE_AT_LEAST} (torch specialises sizes 0 and 1) and the model "
                                         f"branched on {guard}, which the requested size does not meet: at that "
                                         f"size it takes the other path", "source": {
                                             "file": self.source.display_path(file), "line": line, "col": 0, "function": func}})
        return cap

    def _cache_off(self):
        """A transformers model built with its default config (`use_cache=True`)
        returns a DynamicCache, which no tracer can flatten ("argument of type
        DynamicCache"). The trace runs with the cache off, and a note says so:
        a training step never reads it; a forward graph then holds no KV cache
        (the keys and values a generation keeps are not in the file)."""
        if self.cache_configs is None:
            self.cache_configs = []
            seen = set()
            for path, m in self.module.named_modules():
                cfg = getattr(m, "config", None)
                if cfg is None or id(cfg) in seen or getattr(cfg, "use_cache", None) is not True:
                    continue
                seen.add(id(cfg))
                cfg.use_cache = False
                self.cache_configs.append((path or "the model", type(cfg).__name__))
        for path, kind in self.cache_configs:
            where = f"{kind} of {path}" if path != "the model" else f"the model's {kind}"
            if self.args.train:
                why = "a training step never reads the KV cache"
            else:
                why = "this forward graph holds no KV cache: the keys and values a generation keeps are not in the file"
            self.diagnostics.append({"kind": "cache-disabled", "message": f"use_cache=True in {where}: traced with "
                                     f"use_cache=False ({why}; a DynamicCache cannot be traced)"})

    def _fake(self, named):
        from torch._subclasses import FakeTensorMode
        if TORCH2:
            from torch.fx.experimental.symbolic_shapes import ShapeEnv
            self.shape_env = ShapeEnv(duck_shape=False)
            self.fake_mode = FakeTensorMode(shape_env=self.shape_env, allow_fallback_kernels=False,
                                            allow_non_fake_inputs=True)
            self.namer = Symbols(self.shape_env)
            self.tracer = "make_fx symbolic (FakeTensorMode + ShapeEnv)"
        else:
            self.fake_mode = FakeTensorMode(allow_fallback_kernels=False)
            self.namer = SizeNamer([(sym, int(t.shape[d])) for (n, d), sym in named.items()
                                    for name, t, _ in self.raw if name == n])
            self.tracer = "make_fx fake (FakeTensorMode, static sizes)"
        state, aliases = state_tensors(self.module)
        fake_state = [(kind, name, fake_like(self.fake_mode, t, requires_grad=kind == "parameter" and t.requires_grad))
                      for kind, name, t in state]
        self._faked += _fake_plain_attributes(self.module, self.fake_mode, {id(t) for _, _, t in state})
        inputs = []
        for name, t, kw in self.raw:
            shape = []
            for d, size in enumerate(t.shape):
                sym = named.get((name, d))
                if sym is not None and TORCH2:
                    shape.append(self.namer.symbolic(sym, int(size), f"{name}.shape[{d}]"))
                else:
                    shape.append(int(size))
            with self.fake_mode:
                f = torch.empty(shape, dtype=t.dtype, device="cpu")
            if t.requires_grad:
                f.requires_grad_(True)
            inputs.append((name, f, kw))
        return fake_state, aliases, inputs

    def _export(self, named, train):
        if not TORCH2:
            raise ExportError("--capture export needs torch >= 2.1 (torch.export); use the default fake capture")
        from torch.export import Dim
        dims = {}
        shapes = []
        for name, t, kw in self.raw:
            spec = {d: dims.setdefault(sym, Dim(sym)) for (n, d), sym in named.items() if n == name}
            shapes.append((name, kw, spec or None))
        dynamic = {n: s for n, kw, s in shapes if kw}
        positional = tuple(s for n, kw, s in shapes if not kw)
        dynamic_shapes = None
        if any(s for _, _, s in shapes):
            dynamic_shapes = {"args": positional, "kwargs": dynamic} if dynamic else positional
        _to_meta_keeping_ties(self.module)
        # torch.export refuses a dynamic dim whose example is 0 or 1 (it
        # specialises them): such a dim is traced at 2 and written at the
        # user's size (its symbol's hint, from self.raw).
        inputs = [(n, torch.empty([max(int(size), Symbols.TRACE_AT_LEAST) if (n, d) in named else int(size)
                                   for d, size in enumerate(t.shape)], dtype=t.dtype, device="meta"), kw)
                  for n, t, kw in self.raw]
        try:
            cap, ep = trace_export(self.module, inputs, train, _flatten_dynamic(dynamic_shapes, shapes), self.source)
        except ExportError:
            raise
        self.shape_env = None
        self.namer = _ExportSymbols(ep, cap, named, self.raw)
        self.tracer = "torch.export.export + run_decompositions"
        cap.meta_device = self.simulate or "cpu"
        return cap


    def restore_attributes(self):
        """Puts back the meta tensors _fake replaced, so the module can be traced again."""
        for m, k, v in reversed(self._faked):
            setattr(m, k, v)
        self._faked = []


def _check_keywords(module, raw, given_by):
    """Each keyword input names an argument of forward(): a misspelt name
    (`--input input_id:...`) is refused here, by name, instead of failing
    the trace with Python's TypeError. A forward() taking **kwargs
    (transformers' models) accepts any name, as it does when called."""
    try:
        params = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        return
    names = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    catch_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
    for name, _, keyword in raw:
        if keyword and name not in names and not catch_all:
            raise ExportError(f"{given_by} {name}: {type(module).__name__}.forward() has no argument '{name}' "
                              f"(its arguments: {', '.join(names) or 'none by name'}; input0, input1, ... are "
                              f"positional)")


def _to_meta_keeping_ties(module):
    """module.to("meta"), with tied weights still one tensor: Module._apply
    makes a new Parameter per module, so lm_head.weight = embed.weight would
    come out as two parameters (counted twice)."""
    shared = {}
    for m in module.modules():
        for table in (m._parameters, m._buffers):
            for k, t in table.items():
                if t is not None:
                    shared.setdefault(id(t), []).append((table, k))
    module.to("meta")
    for places in shared.values():
        table0, k0 = places[0]
        for table, k in places[1:]:
            table[k] = table0[k0]


def _flatten_dynamic(dynamic_shapes, shapes):
    """torch.export wants dynamic_shapes shaped like (args) or {arg name: ...}."""
    if dynamic_shapes is None:
        return None
    if all(not kw for _, kw, _ in shapes):
        return tuple(s for _, _, s in shapes)
    return {n: s for n, _, s in shapes}


def _fake_plain_attributes(module, fake_mode, registered):
    """Tensors a module holds as plain attributes (not parameters or
    buffers) were made on meta by MetaInit: give them fake twins too.
    Returns [(module, name, meta tensor)] replaced."""
    replaced = []
    for m in module.modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter) and id(v) not in registered \
                    and v.device.type == "meta":
                setattr(m, k, fake_like(fake_mode, v, requires_grad=False))
                replaced.append((m, k, v))
    return replaced


class _ExportSymbols(Symbols):
    """torch.export: the ExportedProgram's symbols, named after the
    user's dims through the placeholders' sizes."""

    def __init__(self, ep, cap, named, raw):
        super().__init__(None)
        inputs = [ph for ph, (kind, _, _) in zip([n for n in ep.graph_module.graph.nodes if n.op == "placeholder"],
                                                 cap.placeholders) if kind == "input"]
        for (name, t, _), ph in zip(raw, inputs):
            val = ph.meta.get("val")
            for d, size in enumerate(getattr(val, "shape", [])):
                sym = named.get((name, d))
                if sym is not None and isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                    self.names[size.node.expr.name] = sym
                    if int(t.shape[d]) != size.node.hint:     # traced at 2 for a user's 0 or 1
                        self.values[size.node.expr] = int(t.shape[d])
                    rng = ep.range_constraints.get(size.node.expr)
                    entry = {"hint": int(t.shape[d]), "kind": "input", "source": f"{name}.shape[{d}]"}
                    if rng is not None and getattr(rng.lower, "is_Integer", False):
                        entry["min"] = int(rng.lower)
                    if rng is not None and getattr(rng.upper, "is_Integer", False) and int(rng.upper) < 2 ** 62:
                        entry["max"] = int(rng.upper)
                    self.info[sym] = entry

    def specialised(self):
        return []


def prepare(factory, example_inputs, model_file, args, capture, source):
    return Prepared(factory, example_inputs, model_file, args, capture, source)

