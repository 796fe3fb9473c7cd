from __future__ import annotations

import pytest

from helpers import ROOT, TEST_SECRET, shortened, write_bugs
from lmgrade import catalog
from lmgrade.grading import Grader
from lmgrade.oracle import LiveReference
from lmgrade.selection import Selection


@pytest.fixture(scope="session", autouse=True)
def expected_store(tmp_path_factory):
    """The expected-value store of every grading the suite starts, its commands included: the session's own
    folder, shared by the whole run and never the user's cache."""
    folder = tmp_path_factory.mktemp("expected_store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMGRADE_CACHE", str(folder))
        yield folder


class Graders:
    """One grader per (assignment, variant), made on first use, closed at the end of the session."""

    def __init__(self):
        self._made: dict = {}

    def __call__(self, name: str, pairs: tuple[str, ...] = ()):
        key = (name, pairs)
        if key not in self._made:
            assignment, variant = catalog.load(Selection.parse(name, pairs))
            # Limits well above what any catalogued bug needs (a stale-context
            # sampler takes about 3 s), so verdicts never depend on the machine's speed.
            self._made[key] = Grader(
                shortened(assignment, cpu_s=10, wall_s=15),
                variant,
                LiveReference(assignment.spec),
                secret=TEST_SECRET,
                jobs=2,
            )
        return self._made[key]

    def close(self):
        for grader in self._made.values():
            grader.close()


@pytest.fixture(scope="session")
def graders():
    made = Graders()
    yield made
    made.close()


@pytest.fixture(scope="session")
def ngram():
    assignment, variant = catalog.load("ngram")
    return assignment, variant


@pytest.fixture(scope="session")
def ngram_grader(graders):
    return graders("ngram")


@pytest.fixture(scope="session")
def buggy(tmp_path_factory, ngram):
    return write_bugs(ngram[0], tmp_path_factory.mktemp("buggy_ngram"))


@pytest.fixture(scope="session")
def reference_submission(tmp_path_factory, ngram):
    folder = tmp_path_factory.mktemp("reference_submission")
    (folder / "ngram.py").write_text((ROOT / "reference" / "ngram" / "ngram.py").read_text())
    return folder
