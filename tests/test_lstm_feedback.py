"""The lstm checks over the whole buggy catalogue: each message's claims are true of the
submission it is shown to, and a bug costs the checks fed the grader's data nothing."""

from __future__ import annotations

import re

import pytest

from helpers import suite_bugs
from lmgrade.declare import catalog

# Slow: grades the lstm catalogue (once a session per worker, with test_assignments.py's bug tests).
pytestmark = pytest.mark.slow

# "X differs (see x)", or "Passes once X is fixed: <its named mistake> (see x)".
NAMED = re.compile(r"(?:differs?|is fixed: [^\n]*?) \(see ([^)]*)\)")
# Checks that grade one component on data the grader gives, and the bugs of that component.
FED = {
    "named_grads": {"named_grads_keys"},
    # (clip_per_array is clip_grad_norm's: step passes with the grader's clip_grad_norm in its place.)
    "step": {"clip_after_step", "step_returns_clipped_norm", "step_skips_layers"},
}


TRAINS_OWN = {"train_no_shuffle", "train_divides_by_sequences", "train_forgets_max_norm"}


@pytest.fixture(scope="session")
def verdicts(bug_verdicts, study):
    """Every check's verdict, by bug and check: for every bug of the catalogue in the study, and in the suite
    for the bugs these tests name and the suite's sample of the catalogue."""
    bugs = catalog.bugs("lstm")
    if not study:
        bugs = {*suite_bugs("lstm", 2), "clip_per_array", *(b for fed in FED.values() for b in fed)}
    return {bug: {v.check.name: v for v in bug_verdicts("lstm", bug)} for bug in sorted(bugs)}


def _lost(verdict) -> bool:
    return verdict.score < verdict.max_score


def test_a_component_named_in_feedback_fails_its_own_check_too(verdicts):
    named_somewhere = 0
    for bug, by_check in verdicts.items():
        for name, verdict in by_check.items():
            for match in NAMED.finditer(verdict.output):
                for named in re.split(r",\s*|\s+and\s+", match[1]):
                    assert named in by_check, (bug, name, named)
                    assert _lost(by_check[named]), f"{bug}/{name} names {named}, which passes"
                    named_somewhere += 1
    assert named_somewhere >= 5


@pytest.mark.parametrize("check", sorted(FED))
def test_a_check_fed_the_graders_data_loses_only_for_its_own_component(verdicts, check):
    for bug, by_check in verdicts.items():
        assert _lost(by_check[check]) == (bug in FED[check]), f"{bug} on {check}:\n{by_check[check].output}"


@pytest.mark.study  # needs train's own bugs beside others
def test_the_recorded_train_cases_lose_only_for_trains_own_bugs(verdicts):
    for bug, by_check in verdicts.items():
        recorded = [v for case, v in by_check["train"].cases if case.args["kind"] == "recorded"]
        assert len(recorded) == 2
        assert any(not v.passed for v in recorded) == (bug in TRAINS_OWN), (bug, by_check["train"].output)


def test_what_a_message_says_of_the_backward_is_what_the_code_does(verdicts):
    """ "does agree with finite differences of your own forward" only where the code's backward does."""
    seen = 0
    for _bug, by_check in verdicts.items():
        for _name, verdict in by_check.items():
            for _case, v in verdict.cases:
                if "Your backward does agree with finite differences" in v.message:
                    seen += 1
                    assert "the forward is wrong" in v.message or "the loss is wrong" in v.message
    assert seen >= 1


def test_a_clipping_bug_costs_what_an_instructor_would_expect(verdicts):
    """A bug in clip_grad_norm costs clip_grad_norm alone: step and train pass with the grader's
    clip_grad_norm in its place, and bad_arguments' clipping case (a ValueError beside the clip the named
    mistake gives) is paid; each says so."""
    lost = {name for name, v in verdicts["clip_per_array"].items() if _lost(v)}
    assert lost == {"clip_grad_norm"}
    assert "pass once this is fixed" in verdicts["clip_per_array"]["bad_arguments"].output
    for name in ("step", "train"):
        assert verdicts["clip_per_array"][name].output.startswith("Passes once clip_grad_norm is fixed")


def test_no_mistake_is_named_where_the_code_crashed_on_every_case_it_changes(graders, tmp_path):
    """np.add.at with its arguments swapped raises on every loss case; the construction cases are right,
    as every mistake's are there: no mistake explains that, so none is named."""
    assignment, _ = catalog.load("lstm")
    source = (assignment.spec.reference_folder() / "recurrent.py").read_text()
    crashing = source.replace("np.add.at(grad_E, tokens[:-1], dx)", "np.add.at(tokens[:-1], grad_E, dx)")
    assert crashing != source
    (tmp_path / "recurrent.py").write_text(crashing)
    (verdict,) = graders("lstm").grade(tmp_path, only={"lstmlm"})
    assert verdict.score < verdict.max_score and verdict.mistake is None
    assert "known mistake" not in verdict.output
