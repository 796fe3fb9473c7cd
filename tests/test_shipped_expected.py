"""A Dask worker grades with the course's expected values as the client computed them, never running the
reference for them itself (`regrade.cluster.course_expected`, `ShippedStore`)."""

from __future__ import annotations

import pytest

from helpers import TEST_SECRET
from lmgrade.boundary import wire
from lmgrade.course.regrade.cluster import ShippedStore, course_expected
from lmgrade.declare import catalog
from lmgrade.grading.expected_store import ExpectedStore
from lmgrade.grading.expected_values import ExpectedValues
from lmgrade.grading.oracle import LiveReference


class NeverRun(LiveReference):
    """A live reference that must not run: every value has to come from the store."""

    def expected(self, check, cases):
        raise AssertionError(f"the reference ran for {check.name}'s expected values")

    def mistaken(self, check, case, mistake, as_expected=False):
        raise AssertionError(f"the reference ran for {check.name}'s mistake {mistake.name}")


@pytest.fixture(scope="module")
def ngram():
    assignment, variant = catalog.load("ngram")
    return assignment, variant


@pytest.fixture(scope="module")
def shipped(ngram, tmp_path_factory):
    assignment, variant = ngram
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMGRADE_CACHE", str(tmp_path_factory.mktemp("client-store")))
        return course_expected(assignment, variant, TEST_SECRET, "cpu")


def test_a_worker_given_the_shipped_values_never_runs_the_reference(ngram, shipped):
    assignment, variant = ngram
    bound = assignment.on("cpu")
    worker = ExpectedValues(
        bound, variant, NeverRun(assignment.spec), secret=TEST_SECRET, store=ShippedStore(shipped, None)
    )
    live = ExpectedValues(bound, variant, LiveReference(assignment.spec), secret=TEST_SECRET)
    for check in bound.checks:
        if check.timing is not None or check.unavailable:
            continue
        cases, values = worker.of(check)
        assert wire.encode(values) == wire.encode(live.of(check)[1]), check.name
        assert worker.reference_seconds(check) is not None  # the limits follow the client's measure
        for mistake in check.mistakes:
            worker.mistake_answers(check, cases, mistake)


def test_the_shipped_entries_come_first_then_the_workers_own_store(tmp_path):
    own = ExpectedStore(tmp_path / "own")
    own.put("kept", [1, 2])
    own.put("both", "own")
    store = ShippedStore({"both": wire.encode("shipped"), "damaged": b"not wire"}, own)
    assert store.get("both") == "shipped"
    assert store.get("kept") == [1, 2]
    assert store.get("damaged") is None and store.get("absent") is None
    store.put("computed", 3.5)  # what the worker computes itself is kept in its own store
    assert own.get("computed") == 3.5 and store.folder == own.folder


def test_a_worker_without_a_store_of_its_own_reads_the_shipped_entries_only():
    store = ShippedStore({"one": wire.encode(1)}, None)
    store.put("two", 2)
    assert store.get("one") == 1 and store.get("two") is None
    assert store.folder.is_dir()
