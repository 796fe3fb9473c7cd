"""The expected-value store: a second grading reuses what the first computed, and nothing else."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from helpers import TEST_SECRET
from lmgrade.declare import catalog
from lmgrade.grading.expected_store import ExpectedStore, default_folder
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference


class CountingReference(LiveReference):
    """The live reference, counting the cases it computes (from its own copy of the reference's files)."""

    def __init__(self, spec, folder):
        self.computed = 0
        super().__init__(spec)
        self.reference_folder = folder

    def expected(self, check, cases):
        self.computed += len(cases)
        return super().expected(check, cases)

    def mistaken(self, check, case, mistake, as_expected=False):
        self.computed += 1
        return super().mistaken(check, case, mistake, as_expected)


@pytest.fixture
def ngram_copy(tmp_path):
    assignment, variant = catalog.load("ngram")
    only = type(assignment)(assignment.spec, [c for c in assignment.checks if c.name in ("pad", "count_ngrams")])
    folder = tmp_path / "reference"
    shutil.copytree(assignment.spec.reference_folder(), folder, ignore=shutil.ignore_patterns("__pycache__"))
    return only, variant, folder


def _expected(assignment, variant, folder, store, secret=TEST_SECRET):
    oracle = CountingReference(assignment.spec, folder)
    with Grader(assignment, variant, oracle, secret=secret, store=store) as grader:
        values = [grader.cases_and_expected(c)[1] for c in assignment.checks]
        mistakes = [
            grader.expected.mistake_answers(c, grader.cases(c), m) for c in assignment.checks for m in c.mistakes
        ]
    return values, mistakes, oracle.computed


def test_a_second_grading_computes_nothing_and_gets_the_same_values(ngram_copy, tmp_path):
    assignment, variant, folder = ngram_copy
    store = ExpectedStore(tmp_path / "store")
    first, first_mistakes, computed = _expected(assignment, variant, folder, store)
    assert computed > 0 and first_mistakes  # the checks have known mistakes, and they were stored too
    again, again_mistakes, computed_again = _expected(assignment, variant, folder, store)
    assert computed_again == 0
    assert again == first and again_mistakes == first_mistakes


def test_a_changed_reference_or_other_cases_miss(ngram_copy, tmp_path):
    assignment, variant, folder = ngram_copy
    store = ExpectedStore(tmp_path / "store")
    _expected(assignment, variant, folder, store)
    # A visible check draws the public cases under any secret: found again. A hidden one's follow the secret.
    assert _expected(assignment, variant, folder, store, secret="another secret")[2] == 0
    hidden = type(assignment)(assignment.spec, [dataclasses.replace(c, visibility="hidden") for c in assignment.checks])
    _expected(hidden, variant, folder, store)
    assert _expected(hidden, variant, folder, store, secret="another secret")[2] > 0
    (folder / "ngram.py").write_text((folder / "ngram.py").read_text() + "\n# changed\n")
    assert _expected(assignment, variant, folder, store)[2] > 0


def test_a_damaged_entry_is_computed_again(ngram_copy, tmp_path):
    assignment, variant, folder = ngram_copy
    store = ExpectedStore(tmp_path / "store")
    first, _, _ = _expected(assignment, variant, folder, store)
    entries = sorted((tmp_path / "store").rglob("*.wire"))
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:7])
    again, _, computed = _expected(assignment, variant, folder, store)
    assert computed > 0 and again == first


def test_the_store_is_its_owners_only_and_hidden_from_the_sandbox(ngram_copy, tmp_path):
    assignment, variant, folder = ngram_copy
    store = ExpectedStore(tmp_path / "store")
    _expected(assignment, variant, folder, store)
    assert (tmp_path / "store").stat().st_mode & 0o077 == 0
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, store=store) as grader:
        assert str((tmp_path / "store").resolve()) in grader.pool.init["protected"]


def test_the_store_can_be_turned_off_or_moved(monkeypatch, tmp_path):
    monkeypatch.setenv("LMGRADE_CACHE", "off")
    assert default_folder() is None
    monkeypatch.setenv("LMGRADE_CACHE", str(tmp_path))
    assert default_folder() == tmp_path


def test_the_zips_recorded_values_leave_nothing_to_compute(tmp_path):
    """What run_autograder grades with: every check's expected values and mistakes' answers, recorded."""
    from lmgrade.course.gradescope.build import record_expected

    assignment, variant = catalog.load("ngram")
    entries = record_expected(assignment, variant, "course secret", tmp_path / "expected")
    assert entries and all(name.endswith(".wire") for name, _ in entries)
    oracle = CountingReference(assignment.spec, assignment.spec.reference_folder())
    with Grader(
        assignment, variant, oracle, secret="course secret", store=ExpectedStore(tmp_path / "expected")
    ) as grader:
        grader.record_expected()
    assert oracle.computed == 0


def test_a_gpu_checks_values_are_never_stored(ngram_copy, tmp_path):
    import dataclasses

    assignment, variant, folder = ngram_copy
    on_gpu = type(assignment)(assignment.spec, [dataclasses.replace(c, device="cuda") for c in assignment.checks])
    with Grader(
        on_gpu,
        variant,
        CountingReference(assignment.spec, folder),
        secret=TEST_SECRET,
        store=ExpectedStore(tmp_path / "store"),
    ) as grader:
        check = on_gpu.checks[0]
        assert grader.expected._stored_key(check, grader.cases(check)) is None
        assert grader.expected._stored_key(assignment.checks[0], grader.cases(check)) is not None


def test_a_recording_store_shares_its_entries_with_the_users_store(tmp_path):
    from lmgrade.grading.expected_store import RecordingStore

    users = ExpectedStore(tmp_path / "user")
    users.put("ab" + "0" * 62, {"expected": [1, 2], "seconds": 0.5})
    zipped = RecordingStore(tmp_path / "zip", users)
    assert zipped.get("ab" + "0" * 62) == {"expected": [1, 2], "seconds": 0.5}
    # Now the zip's own folder holds it: the zip carries it without the user's store.
    assert ExpectedStore(tmp_path / "zip").get("ab" + "0" * 62) == {"expected": [1, 2], "seconds": 0.5}
    assert zipped.get("cd" + "0" * 62) is None and not list((tmp_path / "zip").glob("cd/*"))
    assert RecordingStore(tmp_path / "alone", None).get("ab" + "0" * 62) is None
    # What the zip computes is kept in the user's store too: a grading with the course's secret reuses it.
    zipped.put("ef" + "0" * 62, {"expected": [3], "seconds": 0.1})
    assert (
        users.get("ef" + "0" * 62)
        == ExpectedStore(tmp_path / "zip").get("ef" + "0" * 62)
        == {
            "expected": [3],
            "seconds": 0.1,
        }
    )
