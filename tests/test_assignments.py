"""Every assignment's graders, proved, in every variant: full marks for the
reference and for correct submissions written from the contract alone, zero
for the stub and for submissions that do no work, points lost on the right
check, with the right words, for every bug of the catalogue."""

from __future__ import annotations

import pytest

from autograder import catalog, templates
from conftest import ASSIGNMENTS, contract_submissions, variant_params, write_bugs
from degenerate import CONSTANTS, RAISES, write_degenerate


def _grader_and_assignment(graders, name, pairs):
    grader = graders(name, pairs)
    return grader, grader.assignment, grader.variant


def _paid(verdicts):
    return {v.check.name: v.output for v in verdicts if v.score}


def _unpaid(verdicts):
    return {v.check.name: v.output for v in verdicts if not v.passed}


@pytest.mark.parametrize("name,pairs", variant_params())
def test_the_reference_gets_full_marks(graders, name, pairs, tmp_path):
    grader, assignment, _ = _grader_and_assignment(graders, name, pairs)
    folder = assignment.spec.reference_folder()
    for filename in assignment.spec.files:
        (tmp_path / filename).write_bytes((folder / filename).read_bytes())
    verdicts = grader.grade(tmp_path)
    assert not _unpaid(verdicts)
    assert sum(v.score for v in verdicts) == sum(v.max_score for v in verdicts) == 100


@pytest.mark.parametrize("name,pairs", variant_params())
def test_the_generated_stub_gets_zero_not_implemented(graders, name, pairs, tmp_path):
    grader, assignment, variant = _grader_and_assignment(graders, name, pairs)
    templates.generate(assignment, variant, tmp_path)
    verdicts = grader.grade(tmp_path)
    assert not _paid(verdicts)
    for v in verdicts:
        assert "not implemented" in v.output, f"{v.check.name}: {v.output}"


@pytest.mark.parametrize("body", [*CONSTANTS, RAISES])
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_a_submission_that_does_no_work_scores_exactly_zero(graders, name, body, tmp_path):
    grader, assignment, variant = _grader_and_assignment(graders, name, ())
    assert not _paid(grader.grade(write_degenerate(assignment, variant, tmp_path, body)))


@pytest.mark.parametrize("name,pairs,submission", [
    pytest.param(name, pairs, folder, id=f"{name}-{folder.name}{''.join('-' + p for p in pairs)}")
    for name in ASSIGNMENTS for _, pairs in [(None, p.values[1]) for p in variant_params() if p.values[0] == name]
    for folder in contract_submissions(name)])
def test_correct_submissions_in_other_styles_get_full_marks(graders, name, pairs, submission):
    grader, _, _ = _grader_and_assignment(graders, name, pairs)
    assert not _unpaid(grader.grade(submission))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_each_assignment_has_correct_submissions_in_other_styles(name):
    assert len(contract_submissions(name)) >= 2


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_catalogue_is_large_enough(name):
    bugs = catalog.bugs(name)
    assert len(bugs) >= 12 and all(bug.loses for bug in bugs.values())


def _bug_params():
    return [pytest.param(name, bug, id=f"{name}-{bug}") for name in ASSIGNMENTS for bug in sorted(catalog.bugs(name))]


@pytest.fixture(scope="session")
def bug_folders(tmp_path_factory):
    made = {}

    def folder(name, bug):
        if name not in made:
            assignment, _ = catalog.load(name)
            made[name] = write_bugs(assignment, tmp_path_factory.mktemp(f"bugs_{name}"))
        return made[name][bug]
    return folder


@pytest.mark.parametrize("name,bug", _bug_params())
def test_each_bug_loses_points_on_the_right_check(graders, bug_folders, name, bug):
    # Graded in the variant the bug states (the default if none): RoPE's bugs where the model uses RoPE.
    settings = catalog.bugs(name)[bug].variant
    grader, _, _ = _grader_and_assignment(graders, name, tuple(f"{k}={v}" for k, v in settings.items()))
    loses = catalog.bugs(name)[bug].loses
    # Only the checks the bug must lose on: the other checks' verdicts are proved on the reference.
    verdicts = {v.check.name: v for v in grader.grade(bug_folders(name, bug), only=set(loses))}
    for check, words in loses.items():
        v = verdicts[check]
        assert v.score < v.max_score, f"{bug} should lose points on {check}"
        assert words in v.output, f"{bug}/{check}: {words!r} not in feedback:\n{v.output}"
