from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from autograder import catalog
from autograder.grading import Grader
from autograder.oracle import LiveReference
from autograder.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
TEST_SECRET = "test-secret"


def shortened(assignment, cpu_s: float = 4, wall_s: float = 6):
    """The assignment with limits short enough for a hanging submission in a test."""
    checks = [dataclasses.replace(c, limits=Limits(**{**c.limits.as_dict(), "cpu_s": min(c.limits.cpu_s, cpu_s),
                                                      "wall_s": min(c.limits.wall_s, wall_s)}))
              for c in assignment.checks]
    return type(assignment)(assignment.spec, checks)


@pytest.fixture(scope="session")
def ngram():
    assignment, variant = catalog.load("ngram")
    return assignment, variant


@pytest.fixture(scope="session")
def ngram_grader(ngram):
    assignment, variant = ngram
    # Limits well above what any catalogued bug needs (a stale-context sampler
    # takes about 3 s), so verdicts never depend on the machine's speed.
    with Grader(shortened(assignment, cpu_s=10, wall_s=15), variant, LiveReference(assignment.spec),
                secret=TEST_SECRET, jobs=2) as grader:
        yield grader


@pytest.fixture(scope="session")
def buggy(tmp_path_factory):
    """Folder of each buggy submission of the catalogue, by name."""
    from buggy_ngram import BUGS

    root = tmp_path_factory.mktemp("buggy_ngram")
    return {name: bug.write(root / name) for name, bug in BUGS.items()}


@pytest.fixture(scope="session")
def reference_submission(tmp_path_factory, ngram):
    folder = tmp_path_factory.mktemp("reference_submission")
    (folder / "ngram.py").write_text((ROOT / "reference" / "ngram.py").read_text())
    return folder


def by_name(verdicts):
    return {v.check.name: v for v in verdicts}
