from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lmgrade import catalog
from lmgrade.flawed import write_flawed
from lmgrade.grading import Grader
from lmgrade.oracle import LiveReference
from lmgrade.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
TEST_SECRET = "test-secret"


@pytest.fixture(scope="session", autouse=True)
def expected_store(tmp_path_factory):
    """The expected-value store of every grading the suite starts, its commands included: the session's own
    folder, shared by the whole run and never the user's cache."""
    folder = tmp_path_factory.mktemp("expected_store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMGRADE_CACHE", str(folder))
        yield folder


def shortened(assignment, cpu_s: float = 4, wall_s: float = 6):
    """The assignment with limits short enough for a hanging submission in a test."""
    checks = [dataclasses.replace(c, limits=Limits(**{**c.limits.as_dict(), "cpu_s": min(c.limits.cpu_s, cpu_s),
                                                      "wall_s": min(c.limits.wall_s, wall_s)}))
              for c in assignment.checks]
    return type(assignment)(assignment.spec, checks)


ASSIGNMENTS = list(catalog.assignment_folders())
SUBMISSIONS = ROOT / "tests" / "submissions"


def variants_of(name: str) -> list[tuple[str, ...]]:
    """The default variant, then each other choice of each variant, as --set pairs."""
    return [tuple(f"{k}={v}" for k, v in settings.items()) for settings in catalog.variant_settings(name)]


def variant_params():
    """(assignment, --set pairs) for every assignment and variant, as pytest ids."""
    return [pytest.param(name, pairs, id="-".join([name, *pairs]))
            for name in ASSIGNMENTS for pairs in variants_of(name)]


def contract_submissions(name: str) -> list[Path]:
    """Correct submissions written from the contract alone, in other styles than the reference's."""
    folder = SUBMISSIONS / name
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


class Graders:
    """One grader per (assignment, variant), made on first use, closed at the end of the session."""

    def __init__(self):
        self._made: dict = {}

    def __call__(self, name: str, pairs: tuple[str, ...] = ()):
        key = (name, pairs)
        if key not in self._made:
            settings = dict(pair.split("=", 1) for pair in pairs)
            assignment, variant = catalog.load(name, settings)
            # Limits well above what any catalogued bug needs (a stale-context
            # sampler takes about 3 s), so verdicts never depend on the machine's speed.
            self._made[key] = Grader(shortened(assignment, cpu_s=10, wall_s=15), variant,
                                     LiveReference(assignment.spec), secret=TEST_SECRET, jobs=2)
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


def write_bugs(assignment, root: Path) -> dict[str, Path]:
    """Folder of each buggy submission of the assignment's catalogue, by name."""
    spec = assignment.spec
    return {name: write_flawed(spec.reference_folder(), spec.files, root / name, [bug])
            for name, bug in catalog.bugs(spec.name).items()}


@pytest.fixture(scope="session")
def buggy(tmp_path_factory, ngram):
    return write_bugs(ngram[0], tmp_path_factory.mktemp("buggy_ngram"))


@pytest.fixture(scope="session")
def reference_submission(tmp_path_factory, ngram):
    folder = tmp_path_factory.mktemp("reference_submission")
    (folder / "ngram.py").write_text((ROOT / "reference" / "ngram" / "ngram.py").read_text())
    return folder


def by_name(verdicts):
    return {v.check.name: v for v in verdicts}
