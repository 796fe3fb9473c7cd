"""A wrong answer's explanation (`lmgrade.explained`): computed for the expected value and where the grader asks,
left out of a submission's first run, and a right answer never pays for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_fixtures import sandbox_pool, submission_of

from lmgrade import UNEXPLAINED
from lmgrade.core.explanations import needs_explaining
from lmgrade.declare.flawed import write_flawed
from lmgrade.plugins.rnn.bugs import BUGS
from lmgrade.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "answer,left_out",
    [
        ({"forward": 1.0, "why": UNEXPLAINED}, True),
        ({"parts": {"loss": 2.0, "why": UNEXPLAINED}}, True),
        ([1, (2, UNEXPLAINED)], True),
        ({"forward": 1.0, "why": "agree"}, False),
        ("not computed", False),
        (None, False),
    ],
)
def test_an_answer_that_left_its_explanation_out_is_found(answer, left_out):
    assert needs_explaining(answer) is left_out


def test_the_sandboxed_child_explains_only_when_asked(tmp_path_factory):
    victim = submission_of(tmp_path_factory, "victim", "def double(x):\n    return 2 * x\n")
    case = [{"fn": "double", "args": [4]}]
    with sandbox_pool() as pool:
        first, asked = (
            pool.run(
                scenario="sandbox_fixtures.scenarios:with_explanation",
                submission=victim,
                files=["victim.py"],
                cases=case,
                limits=Limits(cpu_s=2, wall_s=4, memory_mb=512),
                explain=explain,
            ).outcomes[0]
            for explain in (False, True)
        )
    assert first.value == {"answer": 8, "why": UNEXPLAINED}
    assert asked.value == {"answer": 8, "why": "worked out"}


def _runs_of(grader, check: str, monkeypatch) -> list[bool]:
    """The `explain` flag of every sandboxed run of `check`'s scenario the grader makes from now on."""
    asked, run = [], grader.pool.run
    scenario = next(c for c in grader.assignment.checks if c.name == check).scenario_ref

    def recording(**kw):
        if kw["scenario"] == scenario:
            asked.append(kw.get("explain", False))
        return run(**kw)

    monkeypatch.setattr(grader.pool, "run", recording)
    return asked


def test_a_right_answer_runs_once_and_a_wrong_one_is_explained_from_a_second_run(graders, tmp_path, monkeypatch):
    grader = graders("rnn")
    asked = _runs_of(grader, "linear", monkeypatch)
    (right,) = grader.grade(ROOT / "reference" / "rnn", only={"linear"})
    assert right.passed and asked == [False]

    wrong_backward = write_flawed(
        ROOT / "reference" / "rnn", grader.assignment.spec.files, tmp_path / "bug", [BUGS["linear_transposed_gradient"]]
    )
    asked.clear()
    (wrong,) = grader.grade(wrong_backward, only={"linear"})
    assert not wrong.passed and asked == [False, True]
    # Told from the explained run: the forward is right and the backward disagrees with its finite differences.
    assert "the backward is wrong" in wrong.output and "disagree" in wrong.output, wrong.output
    assert UNEXPLAINED not in wrong.output
