from __future__ import annotations

import os

import pytest

from helpers import ROOT, SLOW_CHECKS, TEST_SECRET, shortened, write_bugs
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference


def pytest_addoption(parser):
    parser.addoption(
        "--study",
        action="store_true",
        help="also run the long studies (every bug, cheat, mutant sample, zip and variant): an hour or more on "
        "two cores; `python3 dev.py study` runs them alone",
    )


def _studying(config) -> bool:
    return config.getoption("--study") or os.environ.get("LMGRADE_STUDY") == "1"


def pytest_collection_modifyitems(config, items):
    """The suite leaves out what is marked `study` unless asked (--study, or LMGRADE_STUDY=1)."""
    if _studying(config):
        return
    studies = [item for item in items if item.get_closest_marker("study")]
    if studies:
        config.hook.pytest_deselected(items=studies)
        items[:] = [item for item in items if not item.get_closest_marker("study")]


@pytest.fixture(scope="session")
def study(request) -> bool:
    """Whether this run is the study (every bug, cheat, variant), not the suite's sample of it."""
    return _studying(request.config)


@pytest.fixture(scope="session", autouse=True)
def expected_store(tmp_path_factory):
    """The expected-value store of every grading the suite starts, its commands included: the session's own
    folder, shared by the whole run and never the user's cache."""
    # One folder for every worker of a parallel run (pytest -n): the store is content-addressed and
    # written atomically, so workers share what any of them computed.
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder = shared / "expected_store"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMGRADE_CACHE", str(folder))
        yield folder


class Graders:
    """One grader per (assignment, variant), made on first use, closed at the end of the session."""

    def __init__(self):
        self._made: dict = {}

    def __call__(self, name: str, pairs: tuple[str, ...] = (), cpu_s: float = 10, wall_s: float = 15):
        key = (name, pairs, cpu_s, wall_s)
        if key not in self._made:
            assignment, variant = catalog.load(Selection.parse(name, pairs))
            # By default, limits well above what any catalogued bug needs (a stale-context
            # sampler takes about 3 s), so verdicts never depend on the machine's speed.
            self._made[key] = Grader(
                shortened(assignment, cpu_s=cpu_s, wall_s=wall_s),
                variant,
                LiveReference(assignment.spec),
                secret=TEST_SECRET,
                # The suite's workers keep every core busy already: one fork server (one torch import) each.
                jobs=1,
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


@pytest.fixture(scope="session")
def bug_verdicts(graders, tmp_path_factory):
    """(assignment, bug) -> the bug's verdicts, graded once a session in the variant the bug states: every check
    but the slow ones its catalogue entry does not name."""
    folders, verdicts = {}, {}

    def graded(name: str, bug: str):
        if (name, bug) not in verdicts:
            if name not in folders:
                folders[name] = write_bugs(catalog.load(name)[0], tmp_path_factory.mktemp(f"bugs_{name}"))
            entry = catalog.bugs(name)[bug]
            pairs = tuple(f"{k}={v}" for k, v in entry.variant.items())
            # A bug that must run out of time burns its check's whole CPU limit: a short one proves it as well.
            hangs = any("time limit" in words for words in entry.loses.values())
            grader = graders(name, pairs, cpu_s=1.5, wall_s=3) if hangs else graders(name, pairs)
            only = {c.name for c in grader.assignment.checks} - SLOW_CHECKS | set(entry.loses)
            verdicts[name, bug] = grader.grade(folders[name][bug], only=only)
        return verdicts[name, bug]

    return graded
