"""Forbidden APIs are stopped at torch's dispatcher too: the operators behind each one
(`aten::native_layer_norm`, `aten::_scaled_dot_product_flash_attention_for_cpu`,
`aten::nll_loss_forward`, ...) raise in the sandbox whatever Python path reaches them,
the failed check names the API, and the grading process's own torch is untouched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import NamedTuple

import pytest

from lmgrade.declare import catalog
from lmgrade.declare.assignment import AssignmentError, load_assignment
from lmgrade.declare.flawed import apply

LAYER_NORM_LINE = "        mean = x.mean(dim=-1, keepdim=True)"
ATTENTION_LINE = "        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)"
LOSS_LINE = "    logits = logits.reshape(-1, V)  # (N, V)"
LOG_PROBS = "torch.log_softmax(logits.reshape(-1, V), dim=-1)"
TARGETS = "targets.reshape(-1).long()"


class Route(NamedTuple):
    api: str  # the forbidden API whose work the path reaches
    check: str  # the check that runs the edited code
    through: str  # what the message says the call went through
    edit: tuple[str, str, str]  # (file, the reference's line, what the student wrote instead)


def _hidden(name: str) -> str:
    """An expression that gives `name` at run time and spells it nowhere: no reading of the source finds it."""
    return f'"{name[::-1]}"[::-1]'


def _layer_norm(call: str) -> tuple[str, str, str]:
    return "layers.py", LAYER_NORM_LINE, f"        return {call}\n{LAYER_NORM_LINE}"


def _layer_norm_op(owner: str, name: str, pick: str = "") -> tuple[str, str, str]:
    return _layer_norm(f"getattr({owner}, {_hidden(name)})(x, [x.shape[-1]], self.weight, self.bias, self.eps){pick}")


def _attention(call: str) -> tuple[str, str, str]:
    return (
        "layers.py",
        ATTENTION_LINE,
        f"        y = {call}\n        return self.out_proj(y.transpose(1, 2).reshape(B, T, d_model))\n{ATTENTION_LINE}",
    )


def _loss(call: str) -> tuple[str, str, str]:
    return "model.py", LOSS_LINE, f"    return {call}\n{LOSS_LINE}"


LAYER_NORM, CROSS_ENTROPY, NLL, SDPA = (
    "torch.nn.functional.layer_norm",
    "torch.nn.functional.cross_entropy",
    "torch.nn.functional.nll_loss",
    "torch.nn.functional.scaled_dot_product_attention",
)
FLASH_CPU, MATH = "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_attention_math"

PATHS = {
    "torch.ops.aten.layer_norm": Route(
        LAYER_NORM, "layer_norm", "aten::layer_norm", _layer_norm_op("torch.ops.aten", "layer_norm")
    ),
    "torch.ops.aten.native_layer_norm": Route(
        LAYER_NORM,
        "layer_norm",
        "aten::native_layer_norm",
        _layer_norm_op("torch.ops.aten", "native_layer_norm", "[0]"),
    ),
    "torch._C._VariableFunctions.layer_norm": Route(
        LAYER_NORM, "layer_norm", "aten::layer_norm", _layer_norm_op("torch._C._VariableFunctions", "layer_norm")
    ),
    # A name put together while the code runs, from words no forbidden name is made of alone.
    "a name assembled at run time": Route(
        LAYER_NORM,
        "layer_norm",
        "aten::layer_norm",
        _layer_norm(
            'getattr(torch.ops.aten, "_".join(w for w in ("layer", "norm")))'
            "(x, [x.shape[-1]], self.weight, self.bias, self.eps)"
        ),
    ),
    # torch's own Python version of the operator computes without calling it.
    "torch._refs.native_layer_norm": Route(
        LAYER_NORM,
        "layer_norm",
        "torch._refs.native_layer_norm, a Python version of aten::native_layer_norm",
        _layer_norm_op("torch._refs", "native_layer_norm", "[0]"),
    ),
    "torch.ops.aten.cross_entropy_loss": Route(
        CROSS_ENTROPY,
        "cross_entropy",
        "aten::cross_entropy_loss",
        _loss(f"getattr(torch.ops.aten, {_hidden('cross_entropy_loss')})(logits.reshape(-1, V), {TARGETS})"),
    ),
    "torch.ops.aten.nll_loss_forward": Route(
        NLL,
        "cross_entropy",
        "aten::nll_loss_forward",
        _loss(f"getattr(torch.ops.aten, {_hidden('nll_loss_forward')})({LOG_PROBS}, {TARGETS}, None, 1, -100)[0]"),
    ),
    "torch.ops.aten.nll_loss2d_forward": Route(
        NLL,
        "cross_entropy",
        "aten::nll_loss2d_forward",
        _loss(
            f"getattr(torch.ops.aten, {_hidden('nll_loss2d_forward')})"
            f"({LOG_PROBS}[:, :, None, None], {TARGETS}[:, None, None], None, 1, -100)[0]"
        ),
    ),
    f"torch.ops.aten.{FLASH_CPU}": Route(
        SDPA,
        "attention",
        f"aten::{FLASH_CPU}",
        _attention(f"getattr(torch.ops.aten, {_hidden(FLASH_CPU)})(q, k, v, is_causal=True)[0]"),
    ),
    f"torch.ops.aten.{MATH}": Route(
        SDPA,
        "attention",
        f"aten::{MATH}",
        _attention(f"getattr(torch.ops.aten, {_hidden(MATH)})(q, k, v, None, 0.0, True)[0]"),
    ),
    # Under vmap a composite operator runs vmap's own copy of its decomposition.
    f"torch.vmap of {MATH}": Route(
        SDPA,
        "attention",
        f"aten::{MATH}",
        _attention(
            f"torch.vmap(lambda a, b, c: getattr(torch.ops.aten, {_hidden(MATH)})(a, b, c, None, 0.0, True)[0])"
            "(q, k, v)"
        ),
    ),
}

# LayerNorm written by hand, another way than the reference's: students must stay free to write it so.
HAND_WRITTEN_LAYER_NORM = _layer_norm(
    "(x - x.mean(dim=-1, keepdim=True)) * torch.rsqrt((x - x.mean(dim=-1, keepdim=True)).pow(2).mean(dim=-1, "
    "keepdim=True) + self.eps) * self.weight + self.bias"
)


def write_submission(folder, edits=()):
    """The reference's files in `folder`, with each (file, the reference's line, what replaces it) made."""
    assignment, _ = catalog.load("transformer")
    reference = assignment.spec.reference_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for filename in assignment.spec.files:
        source = (reference / filename).read_text(encoding="utf-8")
        source = apply(source, tuple((old, new) for file, old, new in edits if file == filename), filename)
        (folder / filename).write_text(source, encoding="utf-8")
    return folder


def _verdict(grader, submission, check: str):
    (verdict,) = grader.grade(submission, only={check})
    return verdict


@pytest.mark.parametrize("path", list(PATHS))
def test_a_forbidden_operator_fails_the_check_that_reaches_it(graders, tmp_path, path):
    api, check, through, edit = PATHS[path]
    grader = graders("transformer")
    submission = write_submission(tmp_path, [edit])
    # Nothing in the source names the API: only the sandbox can stop it.
    assert not grader.forbidden_uses(submission).findings
    verdict = _verdict(grader, submission, check)
    assert verdict.score == 0
    assert f"used {api} (reached through {through}), which this assignment forbids" in verdict.output


@pytest.mark.parametrize(
    "check, edits",
    [("layer_norm", ()), ("attention", ()), ("cross_entropy", ()), ("layer_norm", (HAND_WRITTEN_LAYER_NORM,))],
    ids=["reference-layer_norm", "reference-attention", "reference-cross_entropy", "hand-written-layer_norm"],
)
def test_code_that_writes_its_own_still_passes(graders, tmp_path, check, edits):
    verdict = _verdict(graders("transformer"), write_submission(tmp_path, edits), check)
    assert verdict.passed, verdict.output


def test_the_grading_process_keeps_its_operators(graders, tmp_path):
    import torch
    import torch._refs

    submission = write_submission(tmp_path, [PATHS["torch.ops.aten.native_layer_norm"].edit])
    assert _verdict(graders("transformer"), submission, "layer_norm").score == 0
    x = torch.randn(3, 4, dtype=torch.float64)
    normalised = torch.ops.aten.native_layer_norm(x, [4], None, None, 1e-5)[0]
    assert torch.allclose(normalised.mean(dim=-1), torch.zeros(3, dtype=torch.float64), atol=1e-12)
    targets = torch.tensor([0, 1, 2])
    loss = torch.ops.aten.nll_loss_forward(torch.log_softmax(x, -1), targets, None, 1, -100)[0]
    assert torch.allclose(loss, -torch.log_softmax(x, -1)[torch.arange(3), targets].mean())
    # torch's Python versions too: the code the child's copies stop with is never this process's.
    assert torch.allclose(torch._refs.native_layer_norm(x, [4], None, None, 1e-5)[0], normalised)


# Paths a fork server's guards must stop, tried in a process of its own: the blocks never enter this one.
OTHER_PATHS = textwrap.dedent("""
    import json, sys, torch, torch._dynamo
    from lmgrade import catalog
    from lmgrade.sandbox import guards

    spec = catalog.load("transformer")[0].spec
    guards.install(spec.forbidden, spec.forbidden_also, spec.forbidden_operators)
    A = torch.ops.aten
    x, q = torch.randn(2, 3, 4), torch.randn(1, 2, 3, 4)
    logp, t = torch.log_softmax(torch.randn(3, 5), -1), torch.tensor([0, 4, 2])


    class Conv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 3, 1)

        def forward(self, x):
            return A.layer_norm(self.conv(x), [4])


    def inference_mode():
        with torch.inference_mode():
            return A.native_layer_norm(x, [4], None, None, 1e-5)


    def native(a):
        return A.native_layer_norm(a, [4], None, None, 1e-5)


    def mkldnn_layer_norm():
        op = torch._C._jit_get_operation("prim::MKLDNNLayerNorm")[0]
        return op(x.to_mkldnn(), [4], x[0, 0].to_mkldnn(), x[0, 0].to_mkldnn(), 1e-5, False)


    def frozen():
        module = torch.jit.freeze(torch.jit.script(Conv().eval()))
        return torch.jit.optimize_for_inference(module)(torch.randn(1, 3, 4, 4))


    empty, args = torch.empty(()), (x, [4], None, None, 1e-5)
    paths = {
        "inference mode": inference_mode,
        "vmap": lambda: torch.vmap(lambda a: A.layer_norm(a, [4]))(x),
        "torch.compile": lambda: torch.compile(native, backend="aot_eager")(x),
        "out overload": lambda: A.nll_loss_forward.output(logp, t, None, 1, -100, output=empty, total_weight=empty),
        "decomposition table": lambda: torch._decomp.decomposition_table[A.native_layer_norm.default](*args),
        "Python kernel": lambda: A.native_layer_norm.default.py_kernels[torch._C.DispatchKey.Meta](*args),
        "torch._decomp": lambda: torch._decomp.decompositions.nll_loss_forward(logp, t, None, 1, -100),
        "prim::MKLDNNLayerNorm": lambda: torch.ops.prim.MKLDNNLayerNorm(x, [4], x[0, 0], x[0, 0], 1e-5, False),
        "TorchScript's registry": mkldnn_layer_norm,
        "frozen TorchScript": frozen,
    }
    stopped = {}
    for name, path in paths.items():
        guards.calls.clear()
        try:
            path()
            stopped[name] = []
        except BaseException:
            stopped[name] = list(guards.calls)
    # What a hand-written LayerNorm, attention and loss use.
    guards.calls.clear()
    centred = x - x.mean(-1, keepdim=True)
    y = centred / torch.sqrt(x.var(-1, keepdim=True, correction=0) + 1e-5)
    att = torch.softmax(q @ q.transpose(-2, -1), -1) @ q
    loss = -logp.gather(-1, t[:, None]).mean() + torch.nn.functional.log_softmax(y, -1).sum()
    loss = loss + torch.logsumexp(att, -1).sum()
    stopped["allowed"] = list(guards.calls)
    stopped["static runtime"] = hasattr(torch._C, "_jit_to_static_module")
    print(json.dumps(stopped))
""")


def test_every_other_path_to_a_blocked_operator_stops(tmp_path):
    script = tmp_path / "paths.py"  # a file: TorchScript reads the source of what it compiles
    script.write_text(OTHER_PATHS)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    stopped = json.loads(done.stdout.splitlines()[-1])
    assert stopped.pop("allowed") == [] and stopped.pop("static runtime") is False
    for path, calls in stopped.items():
        assert (
            calls
            and all(call.startswith(f"{LAYER_NORM} (reached through ") for call in calls)
            or all(call.startswith(f"{NLL} (reached through ") for call in calls)
        ), (path, calls)


def test_every_pattern_of_the_transformer_names_operators_of_this_torch():
    from lmgrade.sandbox.operators import operator_names

    assignment, _ = catalog.load("transformer")
    operators = assignment.spec.forbidden_operators
    assert set(operators) <= set(assignment.spec.forbidden)
    for api in (LAYER_NORM, CROSS_ENTROPY, NLL, SDPA):
        assert operator_names(operators[api]), api
    blocked = operator_names(p for patterns in operators.values() for p in patterns)
    assert {f"aten::{FLASH_CPU}", f"aten::{MATH}", "aten::nll_loss_forward.output"} <= set(blocked)
    # Nothing a hand-written version needs.
    assert not {"aten::softmax", "aten::_log_softmax", "aten::var", "aten::logsumexp", "aten::gather"} & set(blocked)


TOML = textwrap.dedent("""
    [assignment]
    name = "toy"
    files = ["toy.py"]

    [templates]
    "toy.py" = "toy.py.j2"

    [checks.one]
    points = 2

    [forbidden]
    apis = ["torch.nn.functional.layer_norm"]

    [forbidden.operators]
    "torch.nn.functional.layer_norm" = ["aten::native_layer_norm", "aten::_layer_norm_*"]
""")


def _toml(tmp_path, text):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "toy.py.j2").write_text("def f():\n    raise NotImplementedError\n")
    (folder / "assignment.toml").write_text(text)
    return folder / "assignment.toml"


def test_assignment_toml_names_the_operators_of_each_api(tmp_path):
    spec = load_assignment(_toml(tmp_path, TOML))
    assert spec.forbidden_operators == {
        "torch.nn.functional.layer_norm": ("aten::native_layer_norm", "aten::_layer_norm_*")
    }


@pytest.mark.parametrize(
    "change, message",
    [
        (('"torch.nn.functional.layer_norm" = [', '"torch.nn.LayerNorm" = ['), "is not one of the forbidden apis"),
        (('"aten::native_layer_norm"', '"native_layer_norm"'), "expected a list of operator names"),
        (('"aten::native_layer_norm"', '"aten::native_layer_norm.out"'), "expected a list of operator names"),
    ],
)
def test_assignment_toml_rejects_what_names_no_operator(tmp_path, change, message):
    with pytest.raises(AssignmentError, match=message):
        load_assignment(_toml(tmp_path, TOML.replace(*change)))
