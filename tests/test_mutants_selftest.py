"""`lmgrade selftest` fails where a known mistake is named on more than one mutant of the reference that changes
none of the mistake's lines (its last proof, ``mistakes named elsewhere``), and holds where the names are true.

The assignment is the package `lmgrade new` writes (softmax, 38 mutants). Its one mistake, ``wrong_axis``,
normalises over the first axis by an edit of softmax's return line; doctored, the same answers are made by an
edit of the line before it, so that the two mutants of the return line that normalise over axis 0 (``axis=0``
and ``axis=-0``) are named ``wrong_axis`` where its edit changed another line: named falsely twice.
"""

from __future__ import annotations

import re

from test_authoring_kit import NAME, PACKAGE, generated  # noqa: F401 (the fixture)

from helpers import TEST_SECRET
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.prove.selftest import NAMED_ELSEWHERE, plan, selftest

RETURN = '"return e / e.sum(axis=-1, keepdims=True)", "return e / e.sum(axis=0, keepdims=True)"'
EXP = "e = np.exp(x - x.max(axis=-1, keepdims=True))"
# The same answers, made on the line before the return: the mistake's place is no longer the return line.
DOCTORED = f'"{EXP}", "{EXP}; return e / e.sum(axis=0, keepdims=True)"'


def _named_elsewhere_proof(folder):
    """The last proof alone, on every mutant of the package's reference."""
    made = selftest(
        NAME,
        pm=make_manager(),
        submissions=folder / "tests" / "submissions" / NAME,
        secret=TEST_SECRET,
        jobs=2,
        select=lambda step: step.name == NAMED_ELSEWHERE,
        mutant_sample=None,
    )
    assert [p.name for p in made] == [NAMED_ELSEWHERE]
    return made[0]


def test_the_proof_is_the_last_of_the_plan_and_grades_a_sample_unless_told(generated):  # noqa: F811
    steps = plan(NAME, pm=make_manager(), submissions=generated / "tests" / "submissions" / NAME)
    assert steps[-1].name == NAMED_ELSEWHERE and steps[-1].run is not None
    assert sum(step.run is not None for step in steps) == 1


def test_true_names_hold(generated):  # noqa: F811
    proof = _named_elsewhere_proof(generated)
    assert proof.passed, proof.line()
    # Every mutant graded, and wrong_axis named on the return line's mutants: its own line.
    said = r"no known mistake named falsely more than once; 38 mutants graded, all 38, [1-9]\d* named one"
    assert re.fullmatch(said, proof.detail), proof.detail
    assert "named once elsewhere" not in proof.detail


def test_a_mistake_named_falsely_twice_fails_selftest_naming_it_and_the_mutants(generated):  # noqa: F811
    mistakes = generated / PACKAGE / "mistakes.py"
    text = mistakes.read_text(encoding="utf-8")
    assert RETURN in text
    mistakes.write_text(text.replace(RETURN, DOCTORED), encoding="utf-8")
    proof = _named_elsewhere_proof(generated)
    assert not proof.passed
    line = proof.line()
    assert line.startswith(f"FAIL {NAMED_ELSEWHERE}: wrong_axis is named on 2 mutants that change none of its lines")
    assert "softmax.py:9 softmax: `return e / e.sum(axis=-1, keepdims=True)` -> `return e / e.sum(axis=0" in line
    assert "`return e / e.sum(axis=-0, keepdims=True)`" in line and "(38 mutants graded, all 38)" in line


def test_a_sample_says_so(generated):  # noqa: F811
    made = selftest(
        NAME,
        pm=make_manager(),
        submissions=generated / "tests" / "submissions" / NAME,
        secret=TEST_SECRET,
        select=lambda s: s.name == NAMED_ELSEWHERE,
        mutant_sample=5,
    )
    assert made[-1].name == NAMED_ELSEWHERE and made[-1].passed, made[-1].line()
    assert "; 5 mutants graded, a seeded sample of the 38 (seed 0; lmgrade mutants grades them all), " in (
        made[-1].detail
    )
