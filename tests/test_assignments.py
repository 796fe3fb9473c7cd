"""Every assignment's graders, proved, in every variant: full marks for the
reference and for correct submissions written from the contract alone, zero
for the stub and for submissions that do no work, points lost on the right
check, with the right words, for every bug of the catalogue. Each proof is
`lmgrade.prove.selftest`'s (what `lmgrade selftest` makes), made here with the
suite's graders, case by case."""

from __future__ import annotations

import pytest
from degenerate import CONSTANTS, RAISES, write_degenerate

from helpers import (
    ASSIGNMENTS,
    contract_submissions,
    graded_in,
    port_submissions,
    study_unless,
    suite_bugs,
    variant_params,
)
from lmgrade.declare import catalog, composition, templates
from lmgrade.prove.selftest import NOT_IMPLEMENTED, full_marks, loses_where_it_says, zero


def _grader_and_assignment(graders, name, pairs):
    grader = graders(name, pairs)
    return grader, grader.assignment, grader.variant


def _reference_params():
    """Every variant; the transformer's other variants (a grading of each costs the most) in the study alone."""
    return [
        pytest.param(
            *p.values, id=p.id, marks=[*p.marks, *study_unless(p.values[0] != "transformer" or not p.values[1])]
        )
        for p in variant_params(slow_variants=True)
    ]


@pytest.mark.parametrize("name,pairs", _reference_params())
def test_the_reference_gets_full_marks(graders, name, pairs, tmp_path):
    grader, assignment, _ = _grader_and_assignment(graders, name, pairs)
    folder = assignment.spec.reference_folder()
    for filename in assignment.spec.files:
        (tmp_path / filename).write_bytes((folder / filename).read_bytes())
    verdicts = grader.grade(tmp_path)
    assert full_marks(verdicts) == "100/100"


@pytest.mark.parametrize("name,pairs", _reference_params())
def test_the_generated_stub_gets_zero_not_implemented(graders, name, pairs, tmp_path):
    grader, assignment, variant = _grader_and_assignment(graders, name, pairs)
    templates.generate(assignment, variant, tmp_path)
    zero(grader.grade(tmp_path), says=NOT_IMPLEMENTED)


@pytest.mark.parametrize(
    "name,body",
    [
        # Every body for every assignment in the study; in the suite raising, and a constant for the numpy
        # assignments quickest to grade (the cheat catalogue's sample adds lstm's noise, NaN and constants).
        pytest.param(
            name,
            body,
            id=f"{name}-{body}",
            marks=study_unless(body == RAISES or (body == "0" and name in ("ngram", "rnn"))),
        )
        for name in ASSIGNMENTS
        for body in (*CONSTANTS, RAISES)
    ],
)
def test_a_submission_that_does_no_work_scores_exactly_zero(graders, name, body, tmp_path):
    grader, assignment, variant = _grader_and_assignment(graders, name, ())
    zero(grader.grade(write_degenerate(assignment, variant, tmp_path, body)))


@pytest.mark.parametrize(
    "name,pairs,submission",
    [
        pytest.param(
            name,
            pairs,
            folder,
            id=f"{name}-{folder.name}{''.join('-' + p for p in pairs)}",
            # The suite grades each in the default variant, and one of the transformer's; the study every one.
            marks=study_unless(not pairs and (name != "transformer" or folder == contract_submissions(name)[0])),
        )
        for name in ASSIGNMENTS
        for _, pairs in [(None, p.values[1]) for p in variant_params() if p.values[0] == name]
        for folder in contract_submissions(name)
    ],
)
@pytest.mark.slow
def test_correct_submissions_in_other_styles_get_full_marks(graders, name, pairs, submission):
    grader, assignment, _ = _grader_and_assignment(graders, name, pairs)
    full_marks(grader.grade(submission, only=graded_in(assignment, pairs)))


@pytest.mark.parametrize(
    "name,port",
    [
        # One port per assignment in the suite (a transformer grading costs seconds), every one in the study.
        pytest.param(name, folder, id=f"{name}-{folder.name}", marks=study_unless(folder == port_submissions(name)[0]))
        for name in ASSIGNMENTS
        for folder in port_submissions(name)
    ],
)
@pytest.mark.slow
def test_ports_of_public_code_get_full_marks(graders, name, port):
    """Public implementations ported to the contract keep their own conventions where the contract allows
    them: each is correct, so each gets full marks (the transformer's implement the default variant)."""
    grader, _, _ = _grader_and_assignment(graders, name, ())
    full_marks(grader.grade(port))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_each_assignment_has_correct_submissions_in_other_styles(name):
    assert len(contract_submissions(name)) >= 2


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_catalogue_is_large_enough(name):
    bugs = catalog.bugs(name)
    assert len(bugs) >= 12 and all(bug.loses for bug in bugs.values())


# How many bugs of each catalogue the suite grades (`suite_bugs`); the study grades every one.
SUITE_SAMPLE = {"ngram": 3, "rnn": 3, "lstm": 2, "embeddings": 2, "seq2seq": 2, "transformer": 1}


def _bug_params():
    return [
        pytest.param(name, bug, id=f"{name}-{bug}", marks=study_unless(bug in suite_bugs(name, SUITE_SAMPLE[name])))
        for name in ASSIGNMENTS
        for bug in sorted(catalog.bugs(name))
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name,bug", _bug_params())
def test_each_bug_loses_on_its_component_and_nowhere_else(graders, bug_verdicts, name, bug):
    """One bug, one place: points are lost, with the catalogue's words, on the checks the catalogue
    names, and elsewhere only on checks that compose them and cannot have a stand-in for them; a
    composed check paid by its stand-in run names the component to fix. One grading per bug proves both."""
    # In the variant the bug states: a RoPE bug graded without RoPE would lose nowhere and prove nothing.
    settings = catalog.bugs(name)[bug].variant
    grader, assignment, _ = _grader_and_assignment(graders, name, tuple(f"{k}={v}" for k, v in settings.items()))
    loses = catalog.bugs(name)[bug].loses
    by_name = {c.name: c for c in assignment.checks}
    allowed = set(loses) | {
        c.name for c in assignment.checks if {k.name for k in composition.components(c, by_name)} & set(loses)
    }
    verdicts = bug_verdicts(name, bug)
    # The proof `lmgrade selftest` makes: loses on each check named, with its words, and nowhere else.
    loses_where_it_says(catalog.bugs(name)[bug], verdicts, assignment)
    # One bug, one place: a check that composes the bug's component and has a stand-in for it is paid
    # by its stand-in run (the rest of the code is the reference's), and says so; one without a
    # stand-in earns what its own cases earn, and blames no component.
    failed = {v.check.name for v in verdicts if not v.passed}
    for v in verdicts:
        components = composition.failed_components(v.check, by_name, failed) if v.check.composes else []
        if v.output.startswith("Passes once"):
            assert v.passed and components, f"{bug}/{v.check.name}:\n{v.output}"
            # It names the failed components it replaced, those the reference calls there: some, nothing else.
            assert v.stood_in and set(v.stood_in) <= {c.name for c in components}
            assert all(name in v.output.split("\n", 1)[0] for name in v.stood_in)
        elif (
            components
            and not v.passed
            and not v.check.property_check  # paid case by case: a case calling the component itself never is
            and composition.stand_in_names(v.check, components) is not None
        ):
            assert v.check.name in loses, f"{bug}/{v.check.name}: its stand-in run did not pass:\n{v.output}"
        assert "fix that first" not in v.output and "its own share" not in v.output
    _assert_messages_are_true(bug, verdicts, failed, allowed)


# Words a message may use only where what they claim is so.
# (The softmax over queries, a mask applied after the softmax, and heads merged or split without the
# transpose, which reads other positions' values, mix later positions in too.)
LEAK_BUGS = {
    "mask_off_by_one",
    "no_causal_mask",
    "mask_fills_zero",
    "mask_tril",
    "mask_after_softmax",
    "softmax_over_queries",
    "heads_merged_without_transpose",
    "heads_split_without_transpose",
}
BACKWARD_KEYS = ("['backward", "['grads[", "['grad_h0", "['returned ==")


def _assert_messages_are_true(bug, verdicts, failed, allowed):
    """Each failure message's claim, checked against what the grading saw."""
    for v in verdicts:
        for _case, verdict in v.cases:
            text = verdict.message
            if "the forward is wrong: " in text or "the loss is wrong: " in text:
                # The difference quoted is in the forward's own answers, never a gradient.
                quoted = text.split(" is wrong: ", 1)[1].split("\n", 1)[0]
                assert not any(key in quoted for key in BACKWARD_KEYS), f"{bug}/{v.check.name}: {text}"
            if "stream" in text or "reused from earlier calls" in text:
                assert not (set(v.check.composes) & failed), (
                    f"{bug}/{v.check.name} blames streams while its numeric check failed:\n{text}"
                )
            if " sees token " in text:
                assert bug in LEAK_BUGS, f"{bug}/{v.check.name} reports a leak it does not have: {text}"
            if text.startswith("the property holds, but"):
                assert "own answer is wrong" in text
        if v.mistake is not None:  # a mistake named only where the bug is, or what composes it
            assert v.check.name in allowed, f"{bug}: {v.check.name} names {v.mistake.name}"
