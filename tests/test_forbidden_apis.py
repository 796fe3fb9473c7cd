"""Forbidden library APIs cost exactly the checks that run them: found in the
source before the run, or stopped when called where the source hides them."""

from __future__ import annotations

import pytest

from lmgrade.declare import catalog
from lmgrade.declare.flawed import apply

# A forbidden call in the attention costs its own checks, the properties and timings that run it, and the
# training run; the block, model, train, evaluate_perplexity and generate checks are paid by their stand-in
# runs, with the grader's attention in place of the student's (and say so).
ATTENTION_CHECKS = {
    "attention",
    "attention_rows",
    "causality",
    "bad_arguments",
    "training",
    "attention_speed",
    "train_step_speed",
}
PAID_WITH_THE_GRADERS_ATTENTION = {"block", "model", "model_hidden", "train", "evaluate_perplexity", "generate"}
CROSS_ENTROPY_CHECKS = {"cross_entropy", "ce_stable", "train", "training", "train_step_speed"}

SDPA = (
    """        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)""",
    """        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, d_model))
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)""",
)

# A name no reading of the source can follow, and the error caught: the guard still tells.
HIDDEN_CE = (
    """    logits = logits.reshape(-1, V)  # (N, V)""",
    """    name = "".join(chr(c) for c in (99, 114, 111, 115, 115, 95, 101, 110, 116, 114, 111, 112, 121))
    try:
        return getattr(torch.nn.functional, name)(logits.reshape(-1, V), targets.reshape(-1))
    except BaseException:
        pass
    logits = logits.reshape(-1, V)  # (N, V)""",
)


def _submission(tmp_path, edits: dict):
    assignment, _ = catalog.load("transformer")
    reference = assignment.spec.reference_folder()
    for filename in assignment.spec.files:
        source = (reference / filename).read_text(encoding="utf-8")
        if filename in edits:
            source = apply(source, (edits[filename],), filename)
        (tmp_path / filename).write_text(source, encoding="utf-8")
    return tmp_path


def _lost(verdicts):
    return {v.check.name: v.output for v in verdicts if not v.passed}


@pytest.mark.study  # the suite stops the hidden call (below) and test_forbidden.py reads the source
def test_a_forbidden_call_in_the_source_fails_the_checks_that_run_it(graders, tmp_path):
    verdicts = graders("transformer").grade(_submission(tmp_path, {"layers.py": SDPA}))
    lost = _lost(verdicts)
    assert set(lost) == ATTENTION_CHECKS
    for v in verdicts:
        if v.check.name in PAID_WITH_THE_GRADERS_ATTENTION:
            assert v.output.startswith("Passes once CausalSelfAttention is fixed"), v.output
    for output in lost.values():
        assert "torch.nn.functional.scaled_dot_product_attention" in output and "forbids" in output
        assert "layers.py line" in output


@pytest.mark.slow  # grades the transformer
def test_a_forbidden_call_hidden_from_the_source_is_stopped_when_called(graders, tmp_path):
    submission = _submission(tmp_path, {"model.py": HIDDEN_CE})
    lost = _lost(graders("transformer").grade(submission))
    assert set(lost) == CROSS_ENTROPY_CHECKS
    for output in lost.values():
        assert "used torch.nn.functional.cross_entropy" in output and "forbids" in output


@pytest.mark.parametrize("name", ["ngram", "rnn"])
def test_assignments_without_forbidden_apis_scan_nothing(graders, name, tmp_path):
    grader = graders(name)
    assert grader.forbidden_uses(tmp_path) is None
