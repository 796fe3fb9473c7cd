"""Points only for work done, and a mistake named only where it is the right one."""

from __future__ import annotations

import itertools

import pytest
from degenerate import write_degenerate

from helpers import TEST_SECRET
from lmgrade.core.comparison import Tolerance
from lmgrade.core.seeds import PUBLIC_SECRET, check_rng
from lmgrade.declare import catalog
from lmgrade.declare.checks import Case, CaseContext, Check, Mistake, explains
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.sandbox.pool import CaseOutcome


def test_a_property_is_paid_only_beside_a_right_answer(ngram, ngram_grader, tmp_path):
    """Arguments left alone, but every answer a constant: the property is seen, and earns nothing."""
    assignment, variant = ngram
    submission = write_degenerate(assignment, variant, tmp_path, "None")
    verdicts = {v.check.name: v for v in ngram_grader.grade(submission, only={"no_mutation", "bad_arguments"})}
    for name in ("no_mutation", "bad_arguments"):
        assert verdicts[name].score == 0
    assert "the property holds, but the call's own answer is wrong" in verdicts["no_mutation"].output
    assert "the property does not hold: wrong value: expected 'ValueError'" in verdicts["bad_arguments"].output


class _FakeOracle:
    """Mistake A matches case 0 only, mistake B every case."""

    reference_folder, modules = None, {}

    def __init__(self, answers):
        self.answers = answers

    def protected_paths(self):
        return []

    def mistaken(self, check, case, mistake, as_expected=False):
        return self.answers[mistake.name][case.args]


def test_a_mistake_is_named_only_where_it_explains_every_answer(ngram):
    assignment, variant = ngram
    a, b = (Mistake(name, f"mistake {name}", lambda modules: None) for name in "ab")
    check = Check("c", "c", scenario=lambda m, x: x, make_cases=lambda ctx: [], mistakes=(a, b), tolerance=Tolerance())
    cases = [Case(str(i), i) for i in range(3)]
    got = [CaseOutcome("ok", value=v) for v in (10.0, 11.0, 2.0)]  # case 2 is right (expected 2.0)
    grader = Grader(
        assignment, variant, _FakeOracle({"a": {0: 10.0, 1: 99.0, 2: 2.0}, "b": {0: 10.0, 1: 11.0, 2: 2.0}}), secret="s"
    )
    assert grader.diagnose(check, cases, got) is b
    # b also predicts a wrong answer where the submission was right: not b either.
    grader = Grader(
        assignment, variant, _FakeOracle({"a": {0: 10.0, 1: 99.0, 2: 2.0}, "b": {0: 10.0, 1: 11.0, 2: 5.0}}), secret="s"
    )
    assert grader.diagnose(check, cases, got) is None


class _RaisingOracle(_FakeOracle):
    """Where an answer is an exception, making the mistake raises it."""

    def mistaken(self, check, case, mistake, as_expected=False):
        answer = super().mistaken(check, case, mistake)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_a_mistake_that_raises_is_named_where_the_same_exception_comes_beside_answers_it_explains(ngram):
    assignment, variant = ngram
    k, z = (Mistake(name, f"mistake {name}", lambda modules: None, paired=False) for name in "kz")
    check = Check("c", "c", scenario=lambda m, x: x, make_cases=lambda ctx: [], mistakes=(k, z), tolerance=Tolerance())
    cases = [Case(str(i), i) for i in range(3)]
    raised = CaseOutcome("error", error={"type": "ZeroDivisionError"})

    def diagnosed(got, answers):
        grader = Grader(assignment, variant, _RaisingOracle(answers), secret="s")
        grader.expected._expected["c"] = (cases, [1.0, 1.5, 2.0])  # the reference answers every case
        return grader.diagnose(check, cases, got)

    answers = {"k": {0: 1.0, 1: KeyError(), 2: 2.0}, "z": {0: 1.0, 1: ZeroDivisionError(), 2: 2.0}}
    # The same answers where it answered, ZeroDivisionError where it raised: z, not k (another exception).
    assert diagnosed([CaseOutcome("ok", value=1.0), raised, CaseOutcome("ok", value=2.0)], answers) is z
    # A wrong answer beside the raise: neither.
    assert diagnosed([CaseOutcome("ok", value=1.0), raised, CaseOutcome("ok", value=7.0)], answers) is None
    # Nothing answered: a mistake that raises alike everywhere explains nothing of a submission that only raises.
    everywhere = {"k": {i: KeyError() for i in range(3)}, "z": {i: ZeroDivisionError() for i in range(3)}}
    assert diagnosed([raised] * 3, everywhere) is None


def _assignments():
    return list(catalog.assignment_folders())


def _mistaken(oracle, check, case, mistake):
    """A mistake's answer, or what it raises: a crash differs from any answer, and from another crash."""
    try:
        return oracle.mistaken(check, case, mistake)
    except Exception as exc:
        return f"raises {type(exc).__name__}"


@pytest.mark.parametrize("name", _assignments())
@pytest.mark.parametrize("secret", [TEST_SECRET, PUBLIC_SECRET])
def test_each_check_tells_its_known_mistakes_apart(name, secret):
    """On the check's own cases, each of its mistakes differs from the right answer and from the others: a
    visible check's are drawn from the public secret whatever the grading's (`seeds.case_secret`), so they are
    tried under it alone; a hidden check's under both secrets."""
    assignment, variant = catalog.load(name)
    oracle = LiveReference(assignment.spec)
    for check in assignment.checks:
        if not check.mistakes or (check.visibility == "visible" and secret != PUBLIC_SECRET):
            continue
        cases = check.make_cases(CaseContext(check_rng(secret, name, check.name), variant))
        right = oracle.expected(check, cases)
        answers = {m.name: [_mistaken(oracle, check, c, m) for c in cases] for m in check.mistakes}
        tolerances = [check.tolerance_of(c) for c in cases]
        for m in check.mistakes:
            assert not explains(answers[m.name], right, tolerances), (
                f"{check.name}: {m.name} gives the right answer on every case"
            )
        for m1, m2 in itertools.combinations(check.mistakes, 2):
            assert not explains(answers[m1.name], answers[m2.name], tolerances), (
                f"{check.name}: {m1.name} and {m2.name} give the same answers on every case"
            )


def test_a_property_that_holds_earns_nothing_beside_a_wrong_answer(graders, tmp_path):
    """backward's W_ah gradient off by a tenth, a mistake no one has named: backward twice gives the same
    answer, so the property holds, but a wrong answer never earns it; the modules' cases, right and
    repeatable, still pay."""
    from lmgrade.declare.flawed import Bug, write_flawed

    grader = graders("rnn")
    spec = grader.assignment.spec
    edit = ('"W_ah": delta.T @ h_prev,', '"W_ah": 1.1 * delta.T @ h_prev,')
    off = Bug("W_ah's gradient a tenth too large.", "elman.py", (edit,))
    folder = write_flawed(spec.reference_folder(), spec.files, tmp_path / "bug", [off])
    verdicts = {v.check.name: v for v in grader.grade(folder, only={"repeatable_backward", "elman_backward"})}
    assert verdicts["elman_backward"].score < verdicts["elman_backward"].max_score
    assert verdicts["elman_backward"].mistake is None
    repeatable = verdicts["repeatable_backward"]
    judged = {case.args["what"]: verdict for case, verdict in repeatable.cases}
    assert 0 < repeatable.score < repeatable.max_score, repeatable.output
    assert "the property holds, but the call's own answer is wrong" in judged.pop("ElmanRNN").message
    assert all(verdict.passed for verdict in judged.values()), repeatable.output


def test_a_property_beside_an_answer_a_component_mistake_explains_is_paid(graders, tmp_path):
    """A BPTT bug makes backward's answer wrong, and its own check names the mistake: the property check's
    case is paid where its answer is exactly that mistake's, and says so."""
    from lmgrade.declare.flawed import write_flawed

    grader = graders("rnn")
    spec = grader.assignment.spec
    bug = catalog.bugs("rnn")["bptt_no_carry"]
    folder = write_flawed(spec.reference_folder(), spec.files, tmp_path / "bug", [bug])
    verdicts = {v.check.name: v for v in grader.grade(folder, only={"repeatable_backward", "elman_backward"})}
    backward = verdicts["elman_backward"]
    assert backward.score < backward.max_score and backward.mistake is not None
    repeatable = verdicts["repeatable_backward"]
    assert repeatable.score == repeatable.max_score, repeatable.output
    assert "passes once this is fixed" in repeatable.output and backward.mistake.explanation in repeatable.output
