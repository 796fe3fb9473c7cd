"""How a check's verdict is put into words."""

from __future__ import annotations

from autograder.checks import Case, CaseVerdict
from autograder.grading import MAX_FEEDBACK_CHARS, summarize


def test_feedback_of_one_check_stays_short():
    cases = [(Case(f"case {i}", {}), CaseVerdict(False, f"wrong value {i} " + "x" * 500)) for i in range(100)]
    text = summarize(cases, reveal=True)
    assert len(text) < MAX_FEEDBACK_CHARS + 600
    assert text.startswith("0/100 cases passed.") and "more failed cases, not shown" in text


def test_the_same_failure_everywhere_is_said_once():
    cases = [(Case(f"case {i}", {}), CaseVerdict(False, "not implemented (raised NotImplementedError)"))
             for i in range(4)]
    assert summarize(cases, reveal=True) == ("0/4 cases passed.\n"
                                             "every case: not implemented (raised NotImplementedError)")


def test_hidden_cases_are_not_labelled_with_their_inputs():
    cases = [(Case("pad(['secret'], n=2)", {}), CaseVerdict(False, "wrong")),
             (Case("pad(['x'], n=2)", {}), CaseVerdict(True))]
    text = summarize(cases, reveal=False)
    assert "secret" not in text and "case 1: hidden input" in text and text.startswith("1/2 cases passed.")
