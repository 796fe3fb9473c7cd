"""A property is judged in the grading process, from what the student's code returned: a child's claim buys nothing.

Each submission here rewrites, from inside its own sandboxed child, the public scenario that runs it, so
that the result frames claim the property. The claim is made in whichever form the scenario module
expects: a verdict where the child computed one, observations shaped like a right implementation's where
the grading process computes it (`Check.holds`). Either way the verdict is the grader's own, and a
property pays only beside the call's right answer.
"""

from __future__ import annotations

import numpy as np
import pytest
from degenerate import write_degenerate

from helpers import ROOT
from lmgrade.declare.flawed import without_docstring

# Appended to the submission's layers.py: at import, in the child, every property scenario of the
# transformer is given this module's code (the fork server bound the functions before the import, so
# their code is replaced, not the module's names). The code runs with the scenario module's globals; each
# forged function takes the case's arguments by name, as the scenario it replaces.
FORGE_TRANSFORMER = """

import sys as _sys


def _forged_attention_rows(modules, d_model, n_heads, state, x, g, dtype, c):
    attn = _attention(modules, d_model, n_heads, state, dtype)
    with torch.no_grad():
        answer = _array(attn(_tensor(x, dtype)))
    if "attention_rows_holds" in globals():  # the output a right attention gives with v = c everywhere
        return property_result(answer, np.broadcast_to(np.asarray(c), np.shape(x)).copy())
    return property_result(answer, {"every query's attention weights sum to 1": True})


def _forged_layer_norm_stats(modules, state, x, g, eps, dtype):
    ln = _layer_norm(modules, state, x, eps, dtype)
    with torch.no_grad():
        answer = _array(ln(_tensor(x, dtype)))
    if "layer_norm_stats_holds" in globals():  # the standardised x a right LayerNorm gives with weight 1, bias 0
        x = np.asarray(x, dtype=np.float64)
        mean = x.mean(axis=-1, keepdims=True)
        return property_result(answer, (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True)))
    return property_result(answer, {"mean 0": True, "variance 1": True})


def _forged_ce_stable(modules, logits, huge_logits, targets, level, dtype):
    targets = torch.tensor(targets, dtype=torch.long)
    answer = float(modules["model"].cross_entropy(_tensor(logits, dtype), targets))
    if "ce_stable_holds" in globals():  # a finite loss at 1e4, exactly ln V at uniform logits
        return property_result(answer, {HUGE: 1.0, UNIFORM: math.log(np.shape(logits)[-1])})
    return property_result(answer, {"finite at logits of 1e4": True, "ln V for uniform logits": True})


_scenarios = _sys.modules.get("lmgrade.plugins.transformer.public.scenarios")
if _scenarios is not None:
    for _name in ("attention_rows", "layer_norm_stats", "ce_stable"):
        getattr(_scenarios, _name).__code__ = globals()["_forged_" + _name].__code__
"""

# Wrong answers in the three components whose properties are forged: attention rows left unnormalised,
# a LayerNorm scaled by 0.9, a loss 1% too large.
TRANSFORMER_EDITS = {
    "layers.py": (
        ("att = torch.softmax(att, dim=-1)", "att = torch.exp(att - att.amax(dim=-1, keepdim=True))"),
        ("x_hat = (x - mean) / torch.sqrt(var + self.eps)", "x_hat = (x - mean) / torch.sqrt(var + self.eps) * 0.9"),
    ),
    "model.py": (("    return nll.mean()\n", "    return nll.mean() * 1.01\n"),),
}
FORGED = ("attention_rows", "layer_norm_stats", "ce_stable")


def _reference_copy(name: str, folder, edits: dict, appended: dict):
    """The reference's files of `name` with `edits` made (each exactly once) and `appended` added at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "reference" / name).glob("*.py")):
        if path.name == "__init__.py":
            continue
        source = without_docstring(path.read_text())
        for old, new in edits.get(path.name, ()):
            assert source.count(old) == 1, old
            source = source.replace(old, new)
        (folder / path.name).write_text(source + appended.get(path.name, ""))
    return folder


def test_a_transformer_child_claiming_its_properties_earns_nothing_for_them(graders, tmp_path):
    folder = _reference_copy("transformer", tmp_path / "forged", TRANSFORMER_EDITS, {"layers.py": FORGE_TRANSFORMER})
    verdicts = {v.check.name: v for v in graders("transformer").grade(folder, only=set(FORGED))}
    for name in FORGED:
        verdict = verdicts[name]
        assert verdict.score == 0, f"{name}: {verdict.output}"
        # The forged observations were read (the property seems to hold): the wrong answer alone decides.
        assert all("the property holds, but the call's own answer is wrong" in v.message for _, v in verdict.cases), (
            f"{name}: {verdict.output}"
        )


# In elman.py: backward() gives the right gradients once, twice them after; and, at import, the child's
# comparison of the two results always says "the same".
SECOND_BACKWARD_DOUBLED = (
    "        self.grad_x = delta @ W_ax  # (T, I): what an embedding layer below needs\n",
    "        self.grad_x = delta @ W_ax  # (T, I): what an embedding layer below needs\n"
    "        self._backwards = getattr(self, '_backwards', 0) + 1\n"
    "        if self._backwards > 1:\n"
    "            self.grads = {k: 2 * v for k, v in self.grads.items()}\n",
)
FORGE_RNN = """

import sys as _sys

_scenarios = _sys.modules.get("lmgrade.plugins.rnn.public.scenarios")
if _scenarios is not None:
    _scenarios._same = lambda first, second: True
"""


def test_a_numpy_property_is_judged_by_the_grader_not_by_the_child(graders, tmp_path):
    folder = _reference_copy(
        "rnn", tmp_path / "forged", {"elman.py": (SECOND_BACKWARD_DOUBLED,)}, {"elman.py": FORGE_RNN}
    )
    (verdict,) = graders("rnn").grade(folder, only={"repeatable_backward"})
    assert verdict.score < verdict.max_score
    judged = {case.args["what"]: v for case, v in verdict.cases}
    # The modules' backward is right and repeatable; ElmanRNN's second backward differs from its first.
    assert all(v.passed for what, v in judged.items() if what != "ElmanRNN"), verdict.output
    assert not judged["ElmanRNN"].passed
    assert "the property does not hold" in judged["ElmanRNN"].message
    assert "the second backward equals the first" in judged["ElmanRNN"].message


# Appended to the rnn reference's files: every forward, backward and loss still computes (so arguments are
# left as they were and ValueErrors are raised), but answers NaN, in the contract's shapes.
NAN_SHAPED = """

def _nan_like(value):
    if isinstance(value, dict):
        return {k: _nan_like(v) for k, v in value.items()}
    return np.full(np.shape(value), np.nan)


def _nan_shaped(method):
    def answer(self, *args, **kwargs):
        return _nan_like(method(self, *args, **kwargs))

    return answer

"""
NAN_MODULES = (
    NAN_SHAPED
    + """
for _cls in (Linear, Sigmoid, Tanh, Softmax, CrossEntropy):
    _cls.forward, _cls.backward = _nan_shaped(_cls.forward), _nan_shaped(_cls.backward)
"""
)
NAN_ELMAN = (
    NAN_SHAPED
    + """
for _cls in (ElmanRNN, RNNLM):
    for _name in ("forward", "loss", "backward"):
        setattr(_cls, _name, _nan_shaped(getattr(_cls, _name)))
"""
)


def test_nan_answers_in_the_contracts_shapes_earn_nothing_on_a_property_check(graders, tmp_path):
    grader = graders("rnn")
    folder = _reference_copy("rnn", tmp_path / "nan", {}, {"modules.py": NAN_MODULES, "elman.py": NAN_ELMAN})
    properties = {c.name for c in grader.assignment.checks if c.property_check}
    verdicts = grader.grade(folder, only=properties)
    assert {v.check.name for v in verdicts} == properties
    assert not {v.check.name: v.output for v in verdicts if v.score}
    # The arguments were left alone: the property held, and the NaN answers alone kept it from paying.
    (no_mutation,) = (v for v in verdicts if v.check.name == "no_mutation")
    assert all("the property holds, but the call's own answer is wrong" in v.message for _, v in no_mutation.cases)


@pytest.mark.parametrize("name", ["ngram", "rnn"])
def test_stubs_answering_nan_earn_nothing_on_a_property_check(graders, tmp_path, name):
    # Every body of the stubs returns NaN.
    grader = graders(name)
    folder = write_degenerate(grader.assignment, grader.variant, tmp_path, "float('nan')")
    properties = {c.name for c in grader.assignment.checks if c.property_check}
    verdicts = grader.grade(folder, only=properties)
    assert {v.check.name for v in verdicts} == properties
    assert not {v.check.name: v.output for v in verdicts if v.score}


def test_constructors_draws_are_judged_in_the_grading_process_from_the_arrays():
    """The child sends the arrays a constructor drew; what the contract says of them is computed here."""
    from lmgrade.plugins.embeddings.public import scenarios as embeddings
    from lmgrade.plugins.rnn.public import scenarios as rnn

    rng = np.random.default_rng(0)
    W = rng.uniform(-0.5 / 4, 0.5 / 4, size=(6, 4))
    made = {"W": W, "C": np.zeros((6, 4)), embeddings.SAME_SEED: W, embeddings.OTHER_SEED: W + 1e-3}
    judged = embeddings.skipgram_init_holds({"dim": 4}, made)
    assert all(v is True for k, v in judged.items() if "shape" not in k), judged
    wide = embeddings.skipgram_init_holds({"dim": 4}, {**made, "W": W * 10, "C": np.ones((6, 4))})
    assert not wide["W within +-0.5/D"] and not wide["C zeros"]
    assert embeddings.skipgram_init_holds({"dim": 4}, {"W": "all good", "C": True}) == (
        "W and C are not arrays of numbers"
    )
    # A Linear's initialisation, inside the module check's answer.
    args = {"W": np.zeros((3, 4))}
    drawn = {"forward": 1.0, "initialisation": {"W": rng.uniform(-0.5, 0.5, (3, 4)), "b": np.zeros(3)}}
    assert rnn.module_holds(args, drawn)["initialisation"]["W within +-1/sqrt(in)"] is True
    claimed = {"forward": 1.0, "initialisation": {"W within +-1/sqrt(in)": True, "b zeros": True}}
    assert rnn.module_holds(args, claimed)["initialisation"] == "W and b are not arrays of numbers"
