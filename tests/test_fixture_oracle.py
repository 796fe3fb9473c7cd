"""Recorded fixtures and the oracle that answers from them where the reference is absent."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from helpers import TEST_SECRET
from lmgrade.boundary import wire
from lmgrade.core.seeds import PUBLIC_SECRET
from lmgrade.core.selection import Selection
from lmgrade.course.bundle.fixtures import ARRAYS, DOCUMENT, Fixtures, describe, record, visible_checks
from lmgrade.declare import catalog
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.oracle import FixtureError, LiveReference, RecordedMistakeRaised, RecordedReference


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The ngram fixtures, written and read back, beside the live checks and reference."""
    assignment, variant = catalog.load("ngram")
    folder = tmp_path_factory.mktemp("fixtures")
    record(assignment, variant).write(folder)
    return Fixtures.read(folder), assignment, variant, LiveReference(assignment.spec)


def test_recorded_checks_are_the_public_checks_without_how_mistakes_are_made(recorded):
    fixtures, assignment, _, _ = recorded
    rebuilt = fixtures.to_assignment()
    live = visible_checks(assignment)
    assert [c.name for c in rebuilt.checks] == [c.name for c in live]
    for mine, theirs in zip(rebuilt.checks, live):
        for field in dataclasses.fields(theirs):
            if field.name not in ("make_cases", "mistakes"):
                assert getattr(mine, field.name) == getattr(theirs, field.name), (theirs.name, field.name)
        assert [(m.name, m.explanation) for m in mine.mistakes] == [(m.name, m.explanation) for m in theirs.mistakes]
        assert all(m.patch is None and not m.edits for m in mine.mistakes)
    assert rebuilt.spec.files == assignment.spec.files and rebuilt.spec.forbidden == assignment.spec.forbidden


def test_answers_are_the_reference_answers_on_the_public_cases(recorded):
    fixtures, assignment, variant, live = recorded
    oracle = RecordedReference(fixtures, variant)
    for check in visible_checks(assignment):
        cases = draw_cases(check, assignment.name, variant, PUBLIC_SECRET)
        assert wire.identical(oracle.expected(check, cases), live.expected(check, cases)), check.name
        for mistake in check.mistakes:
            for case in cases[:2]:
                try:
                    wanted = live.mistaken(check, case, mistake)
                except Exception:
                    with pytest.raises(RecordedMistakeRaised):
                        oracle.mistaken(check, case, mistake)
                    continue
                assert wire.identical(oracle.mistaken(check, case, mistake), wanted), (check.name, mistake.name)


def test_cases_drawn_otherwise_are_refused(recorded):
    fixtures, assignment, variant, _ = recorded
    oracle = RecordedReference(fixtures, variant)
    check = next(c for c in visible_checks(assignment) if c.name == "perplexity")
    # A visible check draws the public cases under any secret: drawn as a hidden check's, from another secret.
    hidden_alike = dataclasses.replace(check, visibility="hidden")
    with pytest.raises(FixtureError, match="not the case recorded"):
        oracle.expected(check, draw_cases(hidden_alike, assignment.name, variant, TEST_SECRET))
    with pytest.raises(FixtureError, match="cases, but"):
        oracle.expected(check, draw_cases(check, assignment.name, variant, PUBLIC_SECRET)[:-1])


def test_hidden_checks_another_variant_and_missing_answers_are_refused(recorded):
    fixtures, assignment, variant, _ = recorded
    oracle = RecordedReference(fixtures, variant)
    hidden = next(c for c in assignment.checks if c.visibility != "visible")
    with pytest.raises(FixtureError, match="not one of the public checks recorded"):
        oracle.expected(hidden, draw_cases(hidden, assignment.name, variant, PUBLIC_SECRET))
    with pytest.raises(FixtureError, match="recorded for the default variant"):
        RecordedReference(fixtures, {"order": 4})
    check = next(c for c in visible_checks(assignment) if c.mistakes)
    cases = draw_cases(check, assignment.name, variant, PUBLIC_SECRET)
    damaged = dataclasses.replace(
        fixtures,
        cases={**fixtures.cases, check.name: [dataclasses.replace(r, mistaken={}) for r in fixtures.cases[check.name]]},
    )
    with pytest.raises(FixtureError, match="no recorded answers of the mistake"):
        RecordedReference(damaged, variant).expected(check, cases)


def test_a_changed_archive_or_document_is_refused(tmp_path):
    assignment, variant = catalog.load("rnn")
    record(assignment, variant).write(tmp_path)
    assert Fixtures.read(tmp_path).cases  # as written, it reads
    archive = (tmp_path / ARRAYS).read_bytes()
    (tmp_path / ARRAYS).write_bytes(archive[:-10])
    with pytest.raises(FixtureError, match="does not match"):
        Fixtures.read(tmp_path)
    (tmp_path / ARRAYS).write_bytes(archive)
    (tmp_path / DOCUMENT).write_text('{"format": 99}')
    with pytest.raises(FixtureError, match="not a fixture file"):
        Fixtures.read(tmp_path)


def test_only_module_level_functions_can_be_recorded():
    assignment, variant = catalog.load("ngram")
    check = dataclasses.replace(visible_checks(assignment)[0], judge=lambda *a, **k: None)
    with pytest.raises(FixtureError, match="cannot be recorded"):
        describe(type(assignment)(assignment.spec, [check]), variant)


def test_check_imports_and_explains_itself_without_fork_rlimits_or_flock(reference_submission):
    """As on Windows: the harness imports, and `check` says in one line why it cannot run there."""
    program = (
        "import os, sys; sys.modules['fcntl'] = None; sys.modules['resource'] = None; del os.fork; "
        "from lmgrade.cli import main; main()"
    )
    out = subprocess.run(
        [sys.executable, "-c", program, "check", "ngram", str(reference_submission)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and "needs fork()" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_public_checks_leave_out_timing_and_hidden_checks_and_say_why():
    from lmgrade.course.bundle.public import public_checks

    public = public_checks(Selection("transformer"))
    assignment, _ = catalog.load("transformer")
    timed = {c.name for c in assignment.checks if c.timing is not None}
    assert timed and not any(c.timing for c in public.assignment.checks)
    why = {c["name"]: c["why"] for c in public.left_out}
    assert {n for n, w in why.items() if w == "timed against the reference solution"} == timed
    hidden = {c.name for c in assignment.checks if c.visibility != "visible"}
    assert hidden and all(why[n] == "after due date" or why[n] == "hidden" for n in hidden - timed)
    # Run where every student can: on the CPU, whatever this machine has.
    assert {c.device for c in public.assignment.checks} == {"cpu"}
    kept = {c.name for c in public.assignment.checks}
    assert kept | set(why) == {c.name for c in assignment.checks} and not kept & set(why)
