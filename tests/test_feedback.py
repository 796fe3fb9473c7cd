"""How a check's verdict is put into words."""

from __future__ import annotations

from lmgrade.declare.checks import Case, CaseVerdict
from lmgrade.grading.feedback import MAX_FEEDBACK_CHARS, summarize


def test_feedback_of_one_check_stays_short():
    cases = [(Case(f"case {i}", {}), CaseVerdict(False, f"wrong value {i} " + "x" * 500)) for i in range(100)]
    text = summarize(cases, reveal=True)
    assert len(text) < MAX_FEEDBACK_CHARS + 600
    assert text.startswith("0/100 cases passed.") and "more failed cases, not shown" in text


def test_the_same_failure_everywhere_is_said_once():
    cases = [
        (Case(f"case {i}", {}), CaseVerdict(False, "not implemented (raised NotImplementedError)")) for i in range(4)
    ]
    assert summarize(cases, reveal=True) == (
        "0/4 cases passed.\nevery case: not implemented (raised NotImplementedError)"
    )


def test_hidden_cases_are_not_labelled_with_their_inputs():
    cases = [
        (Case("pad(['secret'], n=2)", {}), CaseVerdict(False, "wrong")),
        (Case("pad(['x'], n=2)", {}), CaseVerdict(True)),
    ]
    text = summarize(cases, reveal=False)
    assert "secret" not in text and "case 1: hidden input" in text and text.startswith("1/2 cases passed.")


def test_the_defences_line_says_what_was_in_force():
    from lmgrade.reports.terminal import describe_defences

    root = {
        "rlimits": ["cpu", "memory"],
        "landlock": {"abi": 4, "network": True, "signals": False},
        "network_namespace": True,
        "user_namespace": False,
        "uid": 61000,
        "read_search_capability": False,
    }
    assert describe_defences(root) == (
        "limits on cpu, memory, landlock ABI 4 (files, TCP), no network (own namespace), uid 61000"
    )
    user = {
        "rlimits": ["cpu"],
        "landlock": None,
        "landlock_error": "Landlock is not available",
        "network_namespace": True,
        "user_namespace": True,
        "uid": 65534,
    }
    assert describe_defences(user) == (
        "limits on cpu, no landlock (Landlock is not available), no network (own namespace), own user namespace"
    )
    assert describe_defences({}) == "no student code ran"


def test_every_outcome_of_a_hidden_case_is_one_of_four_sentences_and_a_visible_one_says_more():
    from lmgrade import Check, Tolerance
    from lmgrade.grading.feedback import (
        HIDDEN_FAILURES,
        NOT_IMPLEMENTED,
        UNANSWERED_HIDDEN,
        WRONG_HIDDEN,
        outcome_verdict,
    )
    from lmgrade.sandbox.pool import CaseOutcome

    check = Check("c", "c", scenario=lambda m, a: a, make_cases=lambda ctx: [], tolerance=Tolerance(rtol=0, atol=0))
    raised = {"type": "ZeroDivisionError", "message": "LEAK", "traceback": "", "file": "", "where": ""}
    told = [
        (CaseOutcome("ok", value=2.0), WRONG_HIDDEN),
        (CaseOutcome("error", message="unreadable result: LEAK"), WRONG_HIDDEN),
        (CaseOutcome("error", error={**raised, "type": "WireError"}), WRONG_HIDDEN),
        (CaseOutcome("error", error={**raised, "type": "NotImplementedError"}), NOT_IMPLEMENTED),
        (CaseOutcome("error", error=raised), UNANSWERED_HIDDEN),
        (CaseOutcome("import_error", error=raised), UNANSWERED_HIDDEN),
        (CaseOutcome("timeout", message="CPU time limit exceeded (7 s)\nlast output:\nLEAK"), UNANSWERED_HIDDEN),
        (CaseOutcome("crashed", message="the process ended with exit status 42"), UNANSWERED_HIDDEN),
        (CaseOutcome("not_run", message="not run: the check's time limit was used up"), UNANSWERED_HIDDEN),
        (CaseOutcome("forbidden", value=["numpy.linalg.inv"]), HIDDEN_FAILURES[3]),
    ]
    for outcome, sentence in told:
        assert outcome_verdict(check, Case("x", {}), 1.0, outcome, reveal=False).message == sentence, outcome
    assert outcome_verdict(check, Case("x", {}), 1.0, CaseOutcome("ok", value=1.0), reveal=False).message == ""
    visible = outcome_verdict(check, Case("x", {}), 1.0, CaseOutcome("error", error=raised), reveal=True)
    assert "ZeroDivisionError: LEAK" in visible.message


def test_printed_output_names_the_submissions_files_as_the_student_has_them():
    """A warning names its file in the sandbox's copy, a folder of a new name each run: shown relative, the
    same submission gets the same feedback every time."""
    from lmgrade.grading.feedback import describe_output
    from lmgrade.sandbox.pool import Output

    printed = [
        f"/tmp/lmgrade-runs-{run}/lmgrade-run-{run}x/submission/modules.py:97: RuntimeWarning: overflow\n"
        for run in ("mk_quruj", "_lbjk5ri")
    ]
    shown = [
        describe_output(Output(head=text, tail="", total_bytes=len(text)), failed=True, reveal=True) for text in printed
    ]
    assert shown[0] == shown[1] and "modules.py:97: RuntimeWarning" in shown[0] and "lmgrade-run" not in shown[0]
