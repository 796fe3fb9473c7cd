"""`lmgrade.boundary.forbidden`: each way of reaching a forbidden API is found, a student's own names are not.

The forbidden list is the transformer assignment's contract. Every positive
case names the line and the api it expects, so a resolution form that stops
working fails here; the negative cases are real correct submissions and a
submission written to look like the forbidden APIs.
"""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch  # noqa: F401 - imported so that paths can also be matched by identity, as in the grader

from lmgrade.boundary.forbidden import Finding, reached, relevant, scan

ROOT = Path(__file__).resolve().parents[1]
SDPA = "torch.nn.functional.scaled_dot_product_attention"
MHA = "torch.nn.MultiheadAttention"
LN = "torch.nn.LayerNorm"
F_LN = "torch.nn.functional.layer_norm"
TRANSFORMER = "torch.nn.Transformer*"
F_CE = "torch.nn.functional.cross_entropy"
CE = "torch.nn.CrossEntropyLoss"
F_NLL = "torch.nn.functional.nll_loss"
NLL = "torch.nn.NLLLoss"
FORBIDDEN = [SDPA, MHA, LN, F_LN, TRANSFORMER, F_CE, CE, F_NLL, NLL]
ALSO = {
    SDPA: ["torch._C._nn.scaled_dot_product_attention", "torch.nn.functional.multi_head_attention_forward"],
    F_LN: ["torch.layer_norm", "torch.native_layer_norm"],
    F_CE: ["torch._C._nn.cross_entropy_loss"],
    F_NLL: ["torch._C._nn.nll_loss", "torch._C._nn.nll_loss_nd", "torch._C._nn.nll_loss2d"],
}


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def line_of(source: str, fragment: str) -> int:
    [line] = [i for i, text in enumerate(source.splitlines(), 1) if fragment in text]
    return line


def hits(sources: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f.file, f.line, f.api) for f in scan(sources, FORBIDDEN, ALSO)]


# (source, fragment of each offending line with the api it reaches)
REACHED = {
    "attribute chain": (
        """
        import torch
        def attend(q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        """,
        [("return torch", SDPA)],
    ),
    "import as": (
        """
        import torch.nn.functional as F
        loss = F.cross_entropy(logits, y)
        """,
        [("F.cross_entropy", F_CE)],
    ),
    "from-import with alias": (
        """
        from torch.nn.functional import scaled_dot_product_attention as sdpa
        out = sdpa(q, k, v)
        """,
        [("out = sdpa", SDPA)],
    ),
    "from torch import nn": (
        """
        from torch import nn
        norm = nn.LayerNorm(8)
        """,
        [("nn.LayerNorm", LN)],
    ),
    "from torch.nn import functional as F": (
        """
        from torch.nn import functional as F
        loss = F.nll_loss(logp, y)
        """,
        [("F.nll_loss", F_NLL)],
    ),
    "assignment aliases": (
        """
        import torch.nn.functional as F
        my_norm = F.layer_norm
        other = my_norm
        act, loss = F.gelu, F.nll_loss
        def forward(x):
            return loss(other(x, x.shape[-1:]), act(x))
        """,
        [
            ("my_norm = F", F_LN),
            ("other = my_norm", F_LN),
            ("act, loss", F_NLL),
            ("return loss", F_LN),
            ("return loss", F_NLL),
        ],
    ),
    "attribute alias": (
        """
        import torch.nn.functional as F
        class CausalSelfAttention:
            def __init__(self):
                self.attn_fn = F.scaled_dot_product_attention
        """,
        [("self.attn_fn", SDPA)],
    ),
    "subclass": (
        """
        import torch.nn as nn
        class LN(nn.LayerNorm):
            pass
        """,
        [("class LN", LN)],
    ),
    "getattr with a folded constant": (
        """
        import torch.nn.functional as F
        fn = getattr(F, "layer_" + "norm")
        """,
        [("getattr", F_LN)],
    ),
    "getattr with a name bound to a constant": (
        """
        import torch
        WHICH = "Cross" + "EntropyLoss"
        def make():
            return getattr(torch.nn, WHICH)()
        """,
        [("WHICH =", CE), ("getattr", CE)],
    ),
    "getattr with an f-string": (
        """
        import torch.nn.functional as F
        fn = getattr(F, f"{'nll'}_{'loss'}")
        """,
        [("getattr", F_NLL)],
    ),
    "getattr with str.join": (
        """
        import torch.nn.functional as F
        fn = getattr(F, "_".join(["cross", "entropy"]))
        """,
        [("getattr", F_CE)],
    ),
    "getattr with % and str.format": (
        """
        import torch.nn.functional as F
        a = getattr(F, "%s_%s" % ("layer", "norm"))
        b = getattr(F, "{}_{}".format("nll", "loss"))
        """,
        [("a = getattr", F_LN), ("b = getattr", F_NLL)],
    ),
    "importlib.import_module": (
        """
        from importlib import import_module
        import importlib
        functional = import_module("torch.nn.functional")
        def loss(a, b):
            return functional.cross_entropy(a, b)
        ln = importlib.import_module(".functional", "torch.nn").layer_norm
        """,
        [("return functional", F_CE), ("ln = importlib", F_LN)],
    ),
    "__import__": (
        """
        a = __import__("torch.nn.functional", fromlist=["x"]).nll_loss
        b = __import__("torch").nn.MultiheadAttention(8, 2)
        """,
        [("a = __import__", F_NLL), ("b = __import__", MHA)],
    ),
    "sys.modules, vars and __dict__": (
        """
        import sys
        import torch.nn.functional as F
        a = sys.modules["torch.nn.functional"].nll_loss
        b = vars(F)["layer_norm"]
        c = F.__dict__.get("cross_entropy")
        """,
        [("a = sys", F_NLL), ("b = vars", F_LN), ("c = F", F_CE)],
    ),
    "torch.ops.aten": (
        """
        import torch
        a = torch.ops.aten.scaled_dot_product_attention(q, k, v)
        b = torch.ops.aten.native_layer_norm.default
        """,
        [("a = torch", SDPA), ("b = torch", F_LN)],
    ),
    "torch._C._nn and torch.layer_norm": (
        """
        import torch
        a = torch._C._nn.nll_loss_nd(logp, y)
        b = torch._C._nn.cross_entropy_loss(logits, y)
        c = torch.layer_norm(x, (8,))
        """,
        [("a = torch", F_NLL), ("b = torch", F_CE), ("c = torch", F_LN)],
    ),
    "the wildcard": (
        """
        import torch
        from torch import nn
        a = nn.TransformerEncoderLayer(8, 2)
        b = torch.nn.modules.transformer.TransformerDecoder
        """,
        [("a = nn", TRANSFORMER), ("b = torch", TRANSFORMER)],
    ),
    "another module path to the same class": (
        """
        import torch
        norm = torch.nn.modules.normalization.LayerNorm(8)
        """,
        [("norm =", LN)],
    ),
    "star import": (
        """
        from torch.nn import *
        norm = LayerNorm(8)
        """,
        [("norm =", LN)],
    ),
    "strings spelling an api": (
        """
        a = "scaled_dot_product_attention"
        b = "torch.nn.functional.cross_entropy"
        c = "nn.MultiheadAttention"
        """,
        [("a =", SDPA), ("b =", F_CE), ("c =", MHA)],
    ),
}


@pytest.mark.parametrize("name", REACHED)
def test_each_resolution_form_is_found(name):
    text, expected = REACHED[name]
    source = src(text)
    assert hits({"layers.py": source}) == sorted(("layers.py", line_of(source, frag), api) for frag, api in expected)


def test_a_finding_names_its_line_and_scope():
    source = src("""
        import torch.nn.functional as F
        print(F.layer_norm)
        _ln = F.layer_norm
        class LayerNorm:
            def forward(self, x):
                return _ln(_ln(x, x.shape[-1:]), x.shape[-1:])  # twice on one line, found once
        """)
    assert scan({"layers.py": source}, FORBIDDEN, ALSO) == [
        Finding("layers.py", 2, F_LN, "print(F.layer_norm)", None),
        Finding("layers.py", 3, F_LN, "_ln = F.layer_norm", "_ln"),
        Finding(
            "layers.py",
            6,
            F_LN,
            "return _ln(_ln(x, x.shape[-1:]), x.shape[-1:])  # twice on one line, found once",
            "LayerNorm",
        ),
    ]


def test_a_reexport_through_another_file_is_found():
    layers = "from torch.nn import LayerNorm as TorchNorm\n"
    model = "from layers import TorchNorm\nimport layers\na = TorchNorm(8)\nb = layers.TorchNorm(8)\n"
    assert hits({"layers.py": layers, "model.py": model}) == [("model.py", 3, LN), ("model.py", 4, LN)]


def test_an_imported_package_is_matched_by_identity(monkeypatch):
    # Generic, not torch: `alias` is only known to be `thing` from the imported package.
    lib, sub = types.ModuleType("fakelib"), types.ModuleType("fakelib.sub")
    lib.thing = sub.alias = lambda: None
    lib.sub = sub
    source = "import fakelib\nfakelib.thing()\nfakelib.sub.alias()\n"
    assert [(f.line, f.api) for f in scan({"a.py": source}, ["fakelib.thing"])] == [(2, "fakelib.thing")]
    monkeypatch.setitem(sys.modules, "fakelib", lib)
    monkeypatch.setitem(sys.modules, "fakelib.sub", sub)
    assert [(f.line, f.api) for f in scan({"a.py": source}, ["fakelib.thing"])] == [
        (2, "fakelib.thing"),
        (3, "fakelib.thing"),
    ]


# A submission that uses the forbidden APIs' short names for its own code.
OWN_NAMES = {
    "layers.py": src('''
        """Layers; LayerNorm is written by hand, unlike torch.nn.LayerNorm."""
        import math
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.nn import *


        class LayerNorm(Module):
            def __init__(self, d_model, eps=1e-5):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(d_model))
                self.bias = nn.Parameter(torch.zeros(d_model))
                self.eps = eps

            def forward(self, x):
                if x.shape[-1] != self.weight.shape[0]:
                    raise ValueError("LayerNorm: wrong last dimension")
                mean = x.mean(-1, keepdim=True)
                var = x.var(-1, keepdim=True, unbiased=False)
                return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


        class CausalSelfAttention(nn.Module):
            def __init__(self, d_model, n_heads):
                super().__init__()
                self.n_heads = n_heads
                self.proj = nn.Linear(d_model, 3 * d_model)
                self.out_proj = Linear(d_model, d_model)

            def forward(self, x):
                B, T, d = x.shape
                q, k, v = self.proj(x).view(B, T, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
                scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
                w = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
                return self.out_proj((w @ v).transpose(1, 2).reshape(B, T, d))


        class TransformerBlock(nn.Module):
            def __init__(self, d_model, n_heads, d_ff):
                super().__init__()
                self.layer_norm = LayerNorm(d_model)
                self.attn = CausalSelfAttention(d_model, n_heads)
                self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

            def forward(self, x):
                x = x + self.attn(self.layer_norm(x))
                return x + F.gelu(self.ff(x))
        '''),
    "model.py": src("""
        import torch
        import torch.nn as nn
        import layers
        from layers import LayerNorm


        class TransformerLM(nn.Module):
            def __init__(self, vocab_size, context_length, d_model, n_layers, n_heads, d_ff):
                super().__init__()
                self.tok_emb = nn.Embedding(vocab_size, d_model)
                self.blocks = nn.ModuleList(layers.TransformerBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
                self.layer_norm = LayerNorm(d_model)
                self.head = nn.Linear(d_model, vocab_size)

            def forward(self, idx):
                x = self.tok_emb(idx)
                for block in self.blocks:
                    x = block(x)
                return self.head(self.layer_norm(x))


        def cross_entropy(logits, targets):
            logp = torch.nn.functional.log_softmax(logits, dim=-1)
            return -logp.gather(-1, targets.unsqueeze(-1)).mean()
        """),
    "train.py": src("""
        import torch
        from model import cross_entropy

        LOSSES = {"cross_entropy": cross_entropy}


        def train(model, x, y, steps):
            opt = torch.optim.AdamW(model.parameters())
            for _ in range(steps):
                loss = LOSSES["cross_entropy"](model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        """),
}


def test_a_submissions_own_names_are_not_flagged():
    assert hits(OWN_NAMES) == []


def test_a_star_import_of_the_submissions_own_file_wins_over_a_librarys():
    model = src("""
        from torch.nn import *
        from layers import *
        block = TransformerBlock(8)
        norm = LayerNorm(8)
        attn = MultiheadAttention(8, 2)
        """)
    layers = "class LayerNorm:\n    pass\n\nclass TransformerBlock:\n    pass\n"
    assert hits({"layers.py": layers, "model.py": model}) == [("model.py", 5, MHA)]


def test_a_string_naming_a_submissions_own_definition_is_flagged_only_without_it():
    train = OWN_NAMES["train.py"]
    assert hits({"train.py": train}) == [
        ("train.py", line_of(train, "LOSSES = "), F_CE),
        ("train.py", line_of(train, "loss = LOSSES"), F_CE),
    ]


@pytest.mark.parametrize("folder", sorted(p.name for p in (ROOT / "tests/submissions/transformer").iterdir()))
def test_correct_submissions_have_no_findings(folder):
    files = sorted((ROOT / "tests/submissions/transformer" / folder).glob("*.py"))
    assert len(files) == 3
    assert hits({f.name: f.read_text() for f in files}) == []


def test_the_reference_has_no_findings():
    folder = ROOT / "reference" / "transformer"
    assert hits({name: (folder / name).read_text() for name in ["layers.py", "model.py", "train.py"]}) == []


def test_a_file_that_does_not_parse_has_no_findings():
    sources = {
        "syntax.py": "import torch\ndef f(:\n    torch.nn.LayerNorm\n",
        "nul.py": "import torch\ntorch.nn.LayerNorm\0\n",
        "deep.py": "import torch\nx = torch" + ".nn" * 100_000 + ".LayerNorm\n",
        "ok.py": "import torch\nx = torch.nn.LayerNorm\n",
    }
    assert hits(sources) == [("ok.py", 2, LN)]
    assert reached(sources, ["syntax.f", "ok.x"]) == {("ok.py", "x")}


def test_the_forbidden_list_is_data():
    source = src("""
        import numpy as np
        from numpy.linalg import inv as invert
        a = np.linalg.inv(m)
        b = invert(m)
        c = np.linalg.solve(m, v)
        """)
    found = scan({"a.py": source}, ["numpy.linalg.inv"])
    assert [(f.line, f.api) for f in found] == [(3, "numpy.linalg.inv"), (4, "numpy.linalg.inv")]


# layers.py and model.py as the transformer's checks see them, with forbidden calls planted.
PLANTED = {
    "layers.py": src("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        def _attend(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)


        class LayerNorm(nn.Module):
            def forward(self, x):
                return F.layer_norm(x, x.shape[-1:])


        class CausalSelfAttention(nn.Module):
            def forward(self, x):
                return _attend(x, x, x)


        class FeedForward(nn.Module):
            def forward(self, x):
                return F.gelu(x)


        class TransformerBlock(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.ln1 = LayerNorm(d)
                self.attn = CausalSelfAttention()
                self.ffn = FeedForward()
        """),
    "model.py": src("""
        import torch.nn as nn
        from layers import LayerNorm, TransformerBlock


        class TransformerLM(nn.Module):
            def __init__(self, d, n_layers):
                super().__init__()
                self.blocks = nn.ModuleList(TransformerBlock(d) for _ in range(n_layers))
                self.ln_f = LayerNorm(d)


        def cross_entropy(logits, targets):
            return -logits.log_softmax(-1).gather(-1, targets[..., None]).mean()
        """),
    "train.py": src("""
        import torch
        from model import cross_entropy

        print(torch.nn.functional.nll_loss)


        def train(model, x, y):
            return cross_entropy(model(x), y)
        """),
}
ATTEND = ("layers.py", line_of(PLANTED["layers.py"], "return F.scaled"), SDPA)
NORM = ("layers.py", line_of(PLANTED["layers.py"], "return F.layer_norm"), F_LN)
MODULE_LEVEL = ("train.py", line_of(PLANTED["train.py"], "print("), F_NLL)


def test_reached_follows_names_and_imports_between_files():
    assert reached(PLANTED, ["layers.LayerNorm"]) == {("layers.py", "LayerNorm")}
    assert reached(PLANTED, ["layers.CausalSelfAttention"]) == {
        ("layers.py", "CausalSelfAttention"),
        ("layers.py", "_attend"),
    }
    assert reached(PLANTED, ["model.TransformerLM"]) == {
        ("model.py", "TransformerLM"),
        ("layers.py", "TransformerBlock"),
        ("layers.py", "LayerNorm"),
        ("layers.py", "CausalSelfAttention"),
        ("layers.py", "_attend"),
        ("layers.py", "FeedForward"),
    }
    assert reached(PLANTED, ["train.train"]) == {("train.py", "train"), ("model.py", "cross_entropy")}
    assert reached(PLANTED, ["nowhere.X", "layers.Nothing"]) == set()


def test_reached_follows_module_attributes():
    model = src("""
        import layers as L
        class TransformerLM:
            def __init__(self):
                self.block = L.TransformerBlock(8)
        """)
    sources = {**PLANTED, "model.py": model}
    assert ("layers.py", "TransformerBlock") in reached(sources, ["model.TransformerLM"])


def relevant_to(roots, files):
    findings = scan(PLANTED, FORBIDDEN, ALSO)
    assert [(f.file, f.line, f.api) for f in findings] == [ATTEND, NORM, MODULE_LEVEL]
    return [(f.file, f.line, f.api) for f in relevant(findings, PLANTED, roots, files)]


def test_a_finding_is_relevant_to_the_checks_that_reach_it():
    assert relevant_to(["layers.LayerNorm"], ["layers.py"]) == [NORM]
    assert relevant_to(["model.TransformerLM"], ["layers.py", "model.py"]) == [ATTEND, NORM]
    assert relevant_to(["layers.FeedForward"], ["layers.py"]) == []
    assert relevant_to(["layers.CausalSelfAttention"], ["layers.py"]) == [ATTEND]


def test_a_module_level_finding_is_relevant_to_every_check_loading_its_file():
    assert relevant_to(["train.train"], ["layers.py", "model.py", "train.py"]) == [MODULE_LEVEL]
    assert relevant_to(["model.TransformerLM"], ["layers.py", "model.py"]) == [ATTEND, NORM]
    assert relevant_to([], ["train.py"]) == [MODULE_LEVEL]
    assert relevant_to([], ["layers.py", "model.py", "train.py"]) == [ATTEND, NORM, MODULE_LEVEL]
