#!/usr/bin/env python3
"""Synthetic before/after pairs for `graphlint diff` (issue 44, docs/validation.md
"graphlint diff: synthetic pairs"); the pairs from public history are
validation/diff_history.py's.

Each pair is a base model of validation/diff_pairs/ (nanoGPT's model.py, a
torchvision BasicBlock ResNet, a timm ViT block, a transformers Llama decoder;
trimmed to small sizes) and an edit modelled on a change those projects made,
labelled by hand with what changed and which source lines a reader expects the
diff to name (`expect`: a line of the head, or for a deletion of the base,
given by a substring unique in that file). Pairs without an expectation make
no semantic change (a re-export, lines moved by a comment) and must be empty
diffs.

For each pair the script writes both versions as `model.py` into a fresh
folder each (with a `.git` marker, so the exporter records `model.py:LINE` on
both sides, as two checkouts of one repository would), captures them with
graphlint-export --train (fake tensors, nothing computed), runs
`graphlint diff --train --format json` and checks that every expected line is
named: by a node change, a parameter change, a fusion change or a new finding
at that line (attribution lines are not counted: they follow from those).

    PY validation/diff_pairs.py [--graphlint build/tools/graphlint] [--only NAME,...]
                                [--write-fixtures tests/fixtures/diff] [--markdown]

Exit 0 when at least 90% of the labelled pairs hit and every no-change pair
is empty, else 1. --write-fixtures copies the captures of the pairs the
CLI tests read (FIXTURE_PAIRS) into that folder.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXPORTER = os.path.join(REPO, "tools", "graphlint-export", "graphlint-export")
PAIRS_DIR = os.path.join(HERE, "diff_pairs")

# (name, base file, label, edits [(old, new)], expect [(side, unique substring)])
PAIRS = [
    # ---- nanoGPT-style GPT --------------------------------------------------
    ("gpt_reexport", "gpt.py", "no change: the same file captured twice", [], []),
    ("gpt_comment_shift", "gpt.py", "no change: a comment block above the attention forward moves every line below",
     [("    def forward(self, x):\n        B, T, C = x.size()",
       "    # causal self-attention: the mask keeps each position from\n    # attending to later ones (nanoGPT)\n"
       "    def forward(self, x):\n        B, T, C = x.size()")], []),
    ("gpt_docstring_shift", "gpt.py", "no change: a docstring added to MLP and blank lines in GPT",
     [("class MLP(nn.Module):\n", 'class MLP(nn.Module):\n    """The feed-forward block: 4x expansion, GELU."""\n\n'),
      ("        b, t = idx.size()\n", "        b, t = idx.size()\n\n")], []),
    ("gpt_gelu_to_relu", "gpt.py", "MLP activation GELU -> ReLU (call changed in forward)",
     [("        x = self.gelu(x)\n", "        x = F.relu(x)\n")], [("head", "x = F.relu(x)")]),
    ("gpt_flash_attention", "gpt.py",
     "manual attention replaced by F.scaled_dot_product_attention (nanoGPT's flash path)",
     [("        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n"
       "        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float(\"-inf\"))\n"
       "        att = F.softmax(att, dim=-1)\n        att = self.attn_dropout(att)\n        y = att @ v\n",
       "        y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)\n")],
     # The softmax still runs, inside the SDPA call (its line), so the base
     # line that is gone is the mask's.
     [("head", "y = F.scaled_dot_product_attention"), ("base", "att = att.masked_fill(")]),
    ("gpt_remove_ln_f", "gpt.py", "final LayerNorm removed from forward",
     [("        x = self.ln_f(x)\n", "")], [("base", "x = self.ln_f(x)")]),
    ("gpt_add_dropout_emb_scale", "gpt.py", "token embeddings scaled by sqrt(n_embd) (a new multiply)",
     [("        tok_emb = self.wte(idx)\n", "        tok_emb = self.wte(idx) * math.sqrt(N_EMBD)\n")],
     [("head", "tok_emb = self.wte(idx) * math.sqrt(N_EMBD)")]),
    ("gpt_softmax_fp32", "gpt.py", "attention scores upcast to float32 before the softmax (a dtype cast)",
     [("        att = F.softmax(att, dim=-1)\n", "        att = F.softmax(att.double(), dim=-1).to(q.dtype)\n")],
     [("head", "att = F.softmax(att.double(), dim=-1)")]),
    ("gpt_no_bias_fc", "gpt.py", "MLP c_fc without bias (nanoGPT's bias=False option): addmm -> mm",
     [("        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)\n", "        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD, bias=False)\n")],
     [("head", "x = self.c_fc(x)")]),
    ("gpt_wider", "gpt.py", "n_embd 64 -> 96 (config): every projection and activation grows",
     [("N_EMBD = 64\n", "N_EMBD = 96\n")], [("head", "x = self.c_fc(x)"), ("head", "tok_emb = self.wte(idx)")]),
    ("gpt_deeper", "gpt.py", "n_layer 2 -> 3 (config): one more block runs the block's lines",
     [("N_LAYER = 2\n", "N_LAYER = 3\n")], [("head", "x = x + self.attn(self.ln_1(x))")]),
    ("gpt_residual_scale", "gpt.py", "MLP residual scaled by 0.5 (a new multiply in Block.forward)",
     [("        x = x + self.mlp(self.ln_2(x))\n", "        x = x + 0.5 * self.mlp(self.ln_2(x))\n")],
     [("head", "x = x + 0.5 * self.mlp(self.ln_2(x))")]),
    ("gpt_mask_value", "gpt.py", "attention mask fill value -inf -> -1e4 (an attribute of masked_fill)",
     [('float("-inf"))', "-1e4)")], [("head", "att = att.masked_fill(self.bias[:, :, :T, :T] == 0, -1e4)")]),
    ("gpt_dropout_p", "gpt.py", "resid_dropout p 0.1 -> 0.2 (an attribute of the dropout)",
     [("        self.resid_dropout = nn.Dropout(0.1)\n", "        self.resid_dropout = nn.Dropout(0.2)\n")],
     [("head", "y = self.resid_dropout(self.c_proj(y))")]),
    # ---- torchvision-style ResNet -------------------------------------------
    ("resnet_reexport", "resnet.py", "no change: the same file captured twice", [], []),
    ("resnet_comment_shift", "resnet.py", "no change: a license header and comments move every line",
     [('"""torchvision-style', '# Copyright (c) the authors. BSD-3-Clause.\n# (header added)\n"""torchvision-style'),
      ("        identity = x\n", "        # keep the input for the residual connection\n        identity = x\n")], []),
    ("resnet_relu_to_gelu", "resnet.py", "block output activation ReLU -> GELU",
     [("        out = out + identity\n        out = self.relu(out)\n", "        out = out + identity\n        out = F.gelu(out)\n")],
     [("head", "out = F.gelu(out)")]),
    ("resnet_remove_bn2", "resnet.py", "second BatchNorm of each block removed",
     [("        out = self.bn2(out)\n", "")], [("base", "out = self.bn2(out)")]),
    ("resnet_kernel5", "resnet.py", "block conv1 kernel 3 -> 5 (padding 2): weights and conv attributes change",
     [("        self.conv1 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)\n",
       "        self.conv1 = nn.Conv2d(planes, planes, kernel_size=5, padding=2, bias=False)\n")],
     [("head", "out = self.conv1(x)")]),
    ("resnet_wider", "resnet.py", "width 16 -> 32 channels (config)",
     [("WIDTH = 16\n", "WIDTH = 32\n")], [("head", "x = self.conv1(x)"), ("head", "out = self.conv2(out)")]),
    ("resnet_maxpool_stem", "resnet.py", "a max-pool added to the stem (torchvision's ImageNet stem)",
     [("        x = self.relu(x)\n        x = self.layer1(x)\n",
       "        x = self.relu(x)\n        x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)\n        x = self.layer1(x)\n")],
     [("head", "x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)")]),
    ("resnet_no_residual", "resnet.py", "the residual add dropped from the block",
     [("        out = out + identity\n", "")], [("base", "out = out + identity")]),
    # ---- timm-style ViT -----------------------------------------------------
    ("vit_reexport", "vit.py", "no change: the same file captured twice", [], []),
    ("vit_comment_shift", "vit.py", "no change: comments inserted in Attention.forward and Block",
     [("        q, k, v = qkv.unbind(0)\n", "        # split the packed projection\n        q, k, v = qkv.unbind(0)\n"),
      ("class Block(nn.Module):\n", "# pre-norm residual block\nclass Block(nn.Module):\n")], []),
    ("vit_no_qkv_bias", "vit.py", "qkv_bias True -> False (config): addmm -> mm in the qkv projection",
     [("QKV_BIAS = True\n", "QKV_BIAS = False\n")],
     [("head", "qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)")]),
    ("vit_silu", "vit.py", "MLP activation GELU -> SiLU",
     [("        self.act = nn.GELU()\n", "        self.act = nn.SiLU()\n")], [("head", "x = self.act(x)")]),
    ("vit_layerscale", "vit.py", "LayerScale on the attention branch (timm's init_values): a new multiply",
     [("        self.norm2 = nn.LayerNorm(dim)\n", "        self.gamma_1 = nn.Parameter(1e-5 * torch.ones(dim))\n        self.norm2 = nn.LayerNorm(dim)\n"),
      ("        x = x + self.attn(self.norm1(x))\n", "        x = x + self.gamma_1 * self.attn(self.norm1(x))\n")],
     [("head", "x = x + self.gamma_1 * self.attn(self.norm1(x))")]),
    ("vit_mlp_ratio2", "vit.py", "mlp_ratio 4 -> 2 (config): fc1/fc2 shrink",
     [("MLP_RATIO = 4\n", "MLP_RATIO = 2\n")], [("head", "x = self.fc1(x)"), ("head", "x = self.fc2(x)")]),
    ("vit_attn_drop", "vit.py", "attention dropout added after the softmax",
     [("        attn = attn.softmax(dim=-1)\n", "        attn = attn.softmax(dim=-1)\n        attn = F.dropout(attn, p=0.1, training=self.training)\n")],
     [("head", "attn = F.dropout(attn, p=0.1, training=self.training)")]),
    ("vit_fused_attn", "vit.py", "attention through F.scaled_dot_product_attention (timm's fused_attn)",
     [("        q = q * self.scale\n        attn = q @ k.transpose(-2, -1)\n        attn = attn.softmax(dim=-1)\n        x = attn @ v\n",
       "        x = F.scaled_dot_product_attention(q, k, v)\n")],
     [("head", "x = F.scaled_dot_product_attention(q, k, v)"), ("base", "attn = attn.softmax(dim=-1)")]),
    # ---- transformers-style Llama -------------------------------------------
    ("llama_reexport", "llama.py", "no change: the same file captured twice", [], []),
    ("llama_comment_shift", "llama.py", "no change: a comment in repeat_kv and in the decoder layer",
     [("    if n_rep == 1:\n", "    # (batch, kv_heads, seq, dim) -> (batch, heads, seq, dim)\n    if n_rep == 1:\n"),
      ("        residual = hidden_states\n        hidden_states = self.input_layernorm",
       "        # pre-norm attention\n        residual = hidden_states\n        hidden_states = self.input_layernorm")], []),
    ("llama_intermediate", "llama.py", "intermediate_size 176 -> 256 (config)",
     [("intermediate_size=176", "intermediate_size=256")],
     [("head", "down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))")]),
    ("llama_gelu", "llama.py", "hidden_act silu -> gelu (config)",
     [('hidden_act="silu"', 'hidden_act="gelu"')],
     [("head", "down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))")]),
    ("llama_attention_bias", "llama.py", "attention_bias False -> True (config): q/k/v/o projections gain a bias",
     [("attention_bias=False", "attention_bias=True")], [("head", "return self.o_proj(attn_output)")]),
    ("llama_gqa", "llama.py", "num_key_value_heads 4 -> 2 (grouped-query attention): repeat_kv now expands",
     [("num_key_value_heads=4", "num_key_value_heads=2")],
     [("head", "hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)")]),
    ("llama_norm_fp32", "llama.py", "RMSNorm computed in float64 and cast back (a dtype round trip)",
     [("        variance = hidden_states.pow(2).mean(-1, keepdim=True)\n",
       "        input_dtype = hidden_states.dtype\n        hidden_states = hidden_states.to(torch.float64)\n"
       "        variance = hidden_states.pow(2).mean(-1, keepdim=True)\n"),
      ("        return self.weight * hidden_states\n", "        return self.weight * hidden_states.to(input_dtype)\n")],
     [("head", "hidden_states = hidden_states.to(torch.float64)")]),
]

# The pairs tests/cli/DiffCliTest.cpp reads, captured by --write-fixtures.
FIXTURE_PAIRS = ["gpt_reexport", "gpt_comment_shift", "gpt_softmax_fp32", "gpt_deeper", "gpt_wider",
                 "resnet_maxpool_stem", "gpt_remove_ln_f"]


def apply_edits(text, edits, name):
    for old, new in edits:
        if text.count(old) != 1:
            raise SystemExit(f"{name}: edit target found {text.count(old)} times: {old!r}")
        text = text.replace(old, new)
    return text


def line_of(text, needle, name):
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    if len(hits) != 1:
        raise SystemExit(f"{name}: expectation {needle!r} matches {len(hits)} lines")
    return hits[0]


REUSE = False  # --reuse: keep the captures already in --keep DIR whose source is unchanged


def capture(python, text, folder, out):
    src = os.path.join(folder, "model.py")
    if REUSE and os.path.exists(out) and os.path.exists(src) and open(src).read() == text:
        return
    os.makedirs(os.path.join(folder, ".git"), exist_ok=True)
    src = os.path.join(folder, "model.py")
    with open(src, "w") as f:
        f.write(text)
    proc = subprocess.run([python, EXPORTER, src, "--train", "-o", out], cwd=folder, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"capture failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")


def named_lines(diff, file="model.py"):
    """(side, line) of every place in FILE the diff names outside attribution."""
    out = set()
    prefix = file + ":"
    for key in ("changes", "params", "fusion"):
        for e in diff[key]:
            if e["source"].startswith(prefix):
                out.add((e["side"], int(e["source"].split(":")[1])))
    for f in diff["findings"]["new"]:
        if f["source"].startswith(prefix):
            out.add(("head", int(f["source"].split(":")[1])))
    return out


def run_pair(pair, python, graphlint, work):
    name, base_file, label, edits, expect = pair
    with open(os.path.join(PAIRS_DIR, base_file)) as f:
        before = f.read()
    after = apply_edits(before, edits, name)
    want = {(side, line_of(after if side == "head" else before, needle, name)) for side, needle in expect}
    d = os.path.join(work, name)
    t0 = time.time()
    capture(python, before, os.path.join(d, "before"), os.path.join(d, "before.fx.json"))
    capture(python, after, os.path.join(d, "after"), os.path.join(d, "after.fx.json"))
    proc = subprocess.run([graphlint, "diff", os.path.join(d, "before.fx.json"), os.path.join(d, "after.fx.json"),
                           "--train", "--format", "json"], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"graphlint diff exit {proc.returncode}: {proc.stderr.strip()}")
    diff = json.loads(proc.stdout)
    named = named_lines(diff)
    if want:
        hit = want <= named
    else:
        hit = diff["empty"]
    extra = sorted(named - want)
    return {"name": name, "family": base_file[:-3], "label": label, "labelled": bool(want), "hit": hit,
            "want": sorted(want), "missed": sorted(want - named), "extra": extra, "empty": diff["empty"],
            "seconds": time.time() - t0, "dir": d}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphlint", default=os.path.join(REPO, "build", "tools", "graphlint"))
    p.add_argument("--only", help="comma-separated pair names")
    p.add_argument("--write-fixtures", metavar="DIR")
    p.add_argument("--markdown", action="store_true", help="print the docs/validation.md table")
    p.add_argument("--keep", metavar="DIR", help="capture into DIR and keep it")
    p.add_argument("--reuse", action="store_true", help="with --keep: reuse the captures of unchanged sources")
    a = p.parse_args()
    global REUSE
    REUSE = a.reuse and bool(a.keep)
    only = set(a.only.split(",")) if a.only else None
    pairs = [x for x in PAIRS if not only or x[0] in only]
    work = a.keep or tempfile.mkdtemp(prefix="graphlint-diff-pairs-")
    results = []
    try:
        for pair in pairs:
            try:
                r = run_pair(pair, sys.executable, a.graphlint, work)
            except (RuntimeError, OSError, json.JSONDecodeError) as e:
                r = {"name": pair[0], "family": pair[1][:-3], "label": pair[2], "labelled": bool(pair[4]),
                     "hit": False, "want": [], "missed": [], "extra": [], "empty": False, "error": str(e),
                     "seconds": 0, "dir": ""}
            results.append(r)
            status = "ok  " if r["hit"] else "MISS"
            detail = r.get("error") or (f"missed {r['missed']}" if r["missed"] else "")
            if not r["labelled"] and not r["hit"]:
                detail = detail or "not an empty diff"
            print(f"{status} {r['name']:<28} {r['seconds']:5.1f}s  {r['label']}"
                  + (f"  [{detail}]" if detail else "") + (f"  (also named {r['extra']})" if r["extra"] else ""))
            if a.write_fixtures and r["name"] in FIXTURE_PAIRS and r.get("dir"):
                os.makedirs(a.write_fixtures, exist_ok=True)
                for side in ("before", "after"):
                    shutil.copy(os.path.join(r["dir"], f"{side}.fx.json"),
                                os.path.join(a.write_fixtures, f"{r['name']}.{side}.fx.json"))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    labelled = [r for r in results if r["labelled"]]
    empty = [r for r in results if not r["labelled"]]
    hits = sum(r["hit"] for r in labelled)
    empties = sum(r["hit"] for r in empty)
    rate = hits / len(labelled) if labelled else 1.0
    print(f"\n{len(results)} pairs: labelled changes named {hits} of {len(labelled)} ({100 * rate:.0f}%); "
          f"no-change pairs empty {empties} of {len(empty)}")
    if a.markdown:
        print("\n| pair | what changed | expected lines | result |\n|---|---|---|---|")
        for r in results:
            want = ", ".join(f"{s}:{l}" for s, l in r["want"]) or "(empty diff)"
            res = "named" if r["hit"] and r["labelled"] else "empty" if r["hit"] else \
                ("error: " + r["error"] if r.get("error") else f"missed {r['missed']}" if r["labelled"] else "not empty")
            print(f"| {r['name']} | {r['label']} | {want} | {res} |")
    return 0 if rate >= 0.9 and empties == len(empty) else 1


if __name__ == "__main__":
    sys.exit(main())
