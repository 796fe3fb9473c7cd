"""How a check's verdict is put into words."""

from __future__ import annotations

from lmgrade.checks import Case, CaseVerdict
from lmgrade.feedback import MAX_FEEDBACK_CHARS, summarize


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
