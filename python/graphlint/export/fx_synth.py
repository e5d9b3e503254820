"""The N-block graphlint-fx document from a trace of the model cut to k
repeated blocks (fx_blocks): the last of them, position t = k-1, is the
template, the one before it (t-1) the previous block.

The trace's written nodes (doc["nodes"], graph order) split into regions by
the block marks:

    head (up to and including block t-1's forward) | F1: block t's forward |
    mid (the forward after the blocks, the backward before them) |
    G1: block t's backward | tail (block t-1's backward and after)

The synthesis keeps head, mid and tail and writes F1 and G1 once per block
t .. N-1 (backward in reverse order). A reference out of a copy resolves by
what it meant in the trace: into its own block; into block t-1's forward
(the previous block: the copy before, block t-1 itself for block t); from G1
into mid where block t-1's backward takes the same value from G1 (the
gradient from the block above: the copy above, mid itself for the top
block). From mid into F1: the top block; from tail into F1/G1: block t.
Node names are numbered as fx_json numbers them (per base name, in order)."""

from .fx_json import name_base, numbered


class Mismatch(Exception):
    """The repeated-block synthesis does not apply; the message says why
    (fx_blocks then traces every block)."""


class _Trace:
    def __init__(self, trace):
        self.doc, written, constants, marks = trace
        if marks is None:
            raise Mismatch("no block marks")
        if constants:
            raise Mismatch("the graph holds baked constants")
        if any(s.get("kind") == "unbacked" for s in self.doc.get("symbols", {}).values()):
            raise Mismatch("the graph has data-dependent sizes")
        # Items: the written nodes (doc["nodes"], graph order); a mark counts
        # the nodes created before it, some never written.
        self.names = [nd["name"] for nd in self.doc["nodes"]]
        index = {id(n): j for j, n in enumerate(written)}
        graph = written[0].graph if written else None
        before, order = [], []
        for node in marks.created:
            before.append(len(order))
            j = index.get(id(node)) if node.graph is graph else None
            if j is not None:
                order.append(j)
        before.append(len(order))
        if order != list(range(len(self.names))):
            raise Mismatch("the graph's nodes are not in the order they were created")
        self.t = t = max(marks.fwd) if marks.fwd else 0   # the template: the last block of the trace
        if t < 1:
            raise Mismatch("the blocks' forward was not seen")
        fs = [before[marks.fwd[p]] if p in marks.fwd else None for p in (t - 1, t)]
        if None in fs or fs[1] <= fs[0]:
            raise Mismatch("the blocks' forward was not seen in order")
        self.f0, self.f1 = fs
        self.lf = fs[1] - fs[0]
        self.mid = self.f1 + self.lf
        end = len(self.names)
        self.g1 = self.tail = end
        if self.doc.get("backward", {}).get("traced"):
            bs = [before[marks.bwd[p]] if p in marks.bwd else None for p in (t - 1, t)]
            if None in bs or not self.mid <= bs[1] < bs[0] or bs[0] + (bs[0] - bs[1]) > end:
                raise Mismatch("the blocks' backward was not seen in order")
            self.g1, self.tail = bs[1], bs[0]
        elif self.mid > end:
            raise Mismatch("the template block's forward is shorter than the one before")
        self.lb = self.tail - self.g1
        # value name -> (item, suffix)
        self.value = {}
        for i, nd in enumerate(self.doc["nodes"]):
            for o in nd["outputs"]:
                self.value[o["name"]] = (i, o["name"][len(nd["name"]):])
        self.item_of = {name: i for i, name in enumerate(self.names)}
        self.up = self._interface()

    def region(self, i):
        if i < self.f0:
            return "head"
        if i < self.f1:
            return "f0"
        if i < self.mid:
            return "f1"
        if i < self.g1:
            return "mid"
        if i < self.tail:
            return "g1"
        return "tail"

    def refs(self, i):
        """Item i's references, (item, output suffix): its inputs, the values its
        outputs are the gradients of, then its save points and hold points."""
        nd = self.doc["nodes"][i]
        out = [self.value.get(r, (None, "")) if isinstance(r, str) else (None, "") for r in nd["inputs"]]
        out += [self.value.get(r, (None, "")) if isinstance(r, str) else (None, "") for r in nd.get("grad_of", [])]
        return out + [(self.item_of.get(s), "") if s else (None, "") for s in nd.get("saved_at", []) + nd.get("held", [])]

    def _interface(self):
        """(mid item, suffix) -> (offset in G1, suffix): where block t-1's
        backward takes from G1 what block t's backward takes from mid (the
        gradient from the block above)."""
        up = {}
        for k in range(self.lb):
            a, b = self.g1 + k, self.tail + k
            if b >= len(self.names):
                raise Mismatch("the last two blocks' backward differ")
            for ra, rb in zip(self.refs(a), self.refs(b)):
                if ra[0] is not None and rb[0] is not None and self.region(ra[0]) == "mid" and \
                        self.region(rb[0]) == "g1":
                    there = (rb[0] - self.g1, rb[1])
                    if up.setdefault(ra, there) != there:
                        raise Mismatch("the gradient between blocks is not one value")
        return up


def synthesise(trace, path, n):
    t = _Trace(trace)
    k = t.t
    one, f1, g1 = f"{path}.{k}", t.f1, t.g1
    order = [(i, None) for i in range(f1)]
    order += [(i, p) for p in range(k, n) for i in range(f1, t.mid)]
    order += [(i, None) for i in range(t.mid, g1)]
    order += [(i, p) for p in range(n - 1, k - 1, -1) for i in range(g1, t.tail)]
    order += [(i, None) for i in range(t.tail, len(t.names))]
    new_names = numbered([name_base(t.names[i]) for i, _ in order])
    name_of = {key: name for key, name in zip(order, new_names)}

    def resolve(i, suffix, frm, pos):
        """((item, copy), suffix) that item i's output `suffix` is, seen from
        an item of region frm in copy pos."""
        r = t.region(i)
        if r == "f1":
            return ((i, pos) if frm in ("f1", "g1") else (i, n - 1) if frm == "mid" else (i, k)), suffix
        if r == "g1":
            if frm == "g1":
                return (i, pos), suffix
            if frm == "tail":
                return (i, k), suffix
            raise Mismatch("a node before the template block's backward uses it")
        if r == "f0" and frm in ("f1", "g1") and pos > k:
            return (f1 + (i - t.f0), pos - 1), suffix
        if r == "mid" and frm == "g1" and (i, suffix) in t.up and pos < n - 1:
            offset, there = t.up[(i, suffix)]
            return (g1 + offset, pos + 1), there
        return (i, None), suffix

    def rename(text, pos):
        if pos is not None and (text == one or text.startswith(one + ".")):
            return f"{path}.{pos}{text[len(one):]}"
        return text

    def value(r, frm, pos):
        if not isinstance(r, str):
            return r
        hit = t.value.get(r)
        if hit is None:
            return rename(r, pos)   # a parameter, buffer or input
        key, suffix = resolve(hit[0], hit[1], frm, pos)
        return name_of[key] + suffix

    def held_point(i, j, s, frm, pos):
        """A hold point. The template is the cut's last block, so a hold past
        the blocks (the model's own frame binding the last block's output
        until it returns) is the last copy's; the others hold as the first
        block does."""
        if not s:
            return s
        target = t.item_of[s]
        if frm == "f1" and pos is not None and pos < n - 1 and t.region(target) not in ("f0", "f1"):
            twin = t.f0 + (i - t.f1)
            held = t.doc["nodes"][twin].get("held", []) if t.f0 <= twin < t.f1 else []
            if j >= len(held) or held[j] != s:
                return None
        return name_of[resolve(target, "", frm, pos)[0]]

    nodes = []
    for (i, pos), name in zip(order, new_names):
        nd, frm = t.doc["nodes"][i], t.region(i)
        out = {}
        for key, v in nd.items():
            if key == "name":
                v = name
            elif key == "inputs":
                v = [value(r, frm, pos) for r in v]
            elif key == "outputs":
                v = [dict(o, name=name + o["name"][len(nd["name"]):]) for o in v]
            elif key == "saved_at":
                v = [name_of[resolve(t.item_of[s], "", frm, pos)[0]] if s else s for s in v]
            elif key == "held":
                v = [held_point(i, j, s, frm, pos) for j, s in enumerate(v)]
                if not any(v):
                    continue   # the writer omits an all-null list
            elif key == "grad_of":
                v = [value(r, frm, pos) if isinstance(r, str) else r for r in v]
            elif key == "module":
                v = rename(v, pos)
            out[key] = v
        nodes.append(out)
    doc = {}
    for key, v in t.doc.items():
        if key == "nodes":
            v = nodes
        elif key == "params":
            v = _runs(v, lambda e: e["name"].startswith(one + "."),
                      lambda e, p: dict(e, name=rename(e["name"], p)), k, n)
        elif key == "outputs":
            v = _runs(v, lambda r: r in t.value and t.region(t.value[r][0]) == "g1",
                      lambda r, p: name_of[(t.value[r][0], p)] + t.value[r][1], k, n,
                      other=lambda r: value(r, "mid", None))
        doc[key] = v
    count = 0
    for p in doc["params"]:
        if p["kind"] == "parameter":
            size = 1
            for d in p["shape"]:
                size *= d
            count += size
    doc["model"] = dict(t.doc["model"], parameters=count)
    return doc


def _runs(entries, in_block, copy, k, n, other=lambda e: e):
    """Each run of consecutive entries of block k written once per block k .. n-1."""
    out, run = [], []
    for e in entries + [None]:
        if e is not None and in_block(e):
            run.append(e)
            continue
        for p in range(k, n):
            out.extend(copy(x, p) for x in run)
        run = []
        if e is not None:
            out.append(other(e))
    return out


def first_difference(a, b):
    """Where two documents first differ, in a few words."""
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            continue
        x, y = a.get(key), b.get(key)
        if isinstance(x, list) and isinstance(y, list):
            for i, (u, v) in enumerate(zip(x, y)):
                if u != v:
                    what = u.get("name", i) if isinstance(u, dict) else u
                    return f"{key}[{i}]: {what}"
            return f"{key}: {len(x)} vs {len(y)} entries"
        return f"{key}"
    return "equal"
