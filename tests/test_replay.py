"""Replay earns nothing beyond the visible checks: under a course secret every other case is drawn from it.

The student bundle ships the reference's answers to the public cases (those
the public default secret draws). A visible check draws those very cases under
any secret (Gradescope shows their inputs and expected values, and a student
reruns them by number), so a table of its answers passes it; every other
check's cases must come from the secret. A case of those that is the same
under every secret (a hand-written example, literal arguments) would let a
submission that looks its arguments up in the bundle's answers earn its points.
Here: no case of a check that is not visible is drawn alike under the public
secret and the suite's; a submission that replays the reference's answers to
the public cases (tests/replay_support.py) earns nothing on those checks under
the suite's secret; and grade and regrade say so when no course secret is set.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import replay_support

from helpers import ASSIGNMENTS, TEST_SECRET, invoke, study_unless, variant_params
from lmgrade.boundary import wire
from lmgrade.core.scenario_arguments import call_scenario
from lmgrade.core.seeds import PUBLIC_SECRET, SECRET_ENV
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.oracle import one_thread, run_scenario
from lmgrade.submissions.loader import load_files

# Training for hundreds of steps and timing dozens of calls: too slow to record and replay here. Their
# cases are drawn data (a corpus, weights, sizes), which the first test holds them to like every other.
SLOW_CHECKS = {"training", "attention_speed", "train_step_speed"}


def _digest(args) -> str:
    return hashlib.sha256(wire.encode(args)).hexdigest()


def _drawn(assignment, variant, secret: str) -> dict[str, str]:
    """{digest of a case's arguments: "check: label"} of every case of every check that is not visible under
    `secret`."""
    return {
        _digest(case.args): f"{check.name}: {case.label}"
        for check in assignment.checks
        if check.visibility != "visible"
        for case in draw_cases(check, assignment.name, variant, secret)
    }


@pytest.mark.parametrize("name,pairs", variant_params())
def test_no_case_is_drawn_alike_under_another_secret(name, pairs):
    """Every case of a check that is not visible, hand-written examples included, takes a part from the secret:
    none is one of the public cases."""
    assignment, variant = catalog.load(Selection.parse(name, pairs))
    assignment = assignment.on("cpu")
    public = _drawn(assignment, variant, PUBLIC_SECRET)
    secret = _drawn(assignment, variant, TEST_SECRET)
    assert len(public) >= sum(c.visibility != "visible" for c in assignment.checks)  # their cases, not nothing
    alike = sorted(public[d] for d in public.keys() & secret.keys())
    assert not alike, f"the same under the public secret and another: {alike}"


def _record(assignment, variant) -> replay_support.Recorder:
    """The reference's answer to every call the public cases' scenarios make (the slow checks' aside)."""
    modules = load_files(assignment.spec.reference_folder(), assignment.spec.files)
    one_thread()  # as the sandbox and the grader's reference run: far faster on a busy machine
    recorder = replay_support.Recorder(modules)
    for check in assignment.checks:
        if check.name in SLOW_CHECKS or check.unavailable:
            continue
        for case in draw_cases(check, assignment.name, variant, PUBLIC_SECRET):
            call_scenario(check.scenario, modules, wire.decode(wire.encode(case.args)))
    return recorder


def _replays_the_public_cases(assignment, variant, recorder) -> tuple[int, int]:
    """(cases the replay passes, cases) over the public cases of the visible checks, replayed in this process."""
    modules = replay_support.use(recorder)
    reference = load_files(assignment.spec.reference_folder(), assignment.spec.files)
    passed = total = 0
    for check in assignment.checks:
        if check.name in SLOW_CHECKS or check.unavailable or check.visibility != "visible":
            continue
        for case in draw_cases(check, assignment.name, variant, PUBLIC_SECRET):
            expected = run_scenario(check, reference, case)
            try:
                got = run_scenario(check, modules, case)
            except Exception:
                got = None
            total += 1
            passed += got is not None and check.verdict(case, expected, got, reveal=True).passed
    return passed, total


def _replay_submission(assignment, recorder, folder: Path) -> Path:
    """A submission of the assignment's files, each defining the contract's names as replays of the table."""
    folder.mkdir()
    recorder.write(folder)
    shutil.copy(Path(replay_support.__file__), folder / "replay_support.py")
    for filename in assignment.spec.files:
        stem = Path(filename).stem
        (folder / filename).write_text(f"from replay_support import install\n\ninstall(globals(), {stem!r})\n")
    return folder


# The default variant of each assignment, and the transformer's sinusoidal positions (hand-sized configs).
# The suite replays rnn (a replay of ngram costs more: its sampler calls are many); the study every one.
REPLAYED = [pytest.param(name, (), id=name, marks=study_unless(name == "rnn")) for name in ASSIGNMENTS] + [
    pytest.param(
        "transformer", ("positions=sinusoidal",), id="transformer-positions=sinusoidal", marks=study_unless(False)
    )
]


# Slow: records and grades one submission per assignment.
@pytest.mark.slow
@pytest.mark.parametrize("name,pairs", REPLAYED)
def test_answers_recorded_on_the_public_cases_earn_nothing_under_a_secret(graders, name, pairs, tmp_path):
    grader = graders(name, pairs)
    assignment, variant = grader.assignment, grader.variant
    recorder = _record(assignment, variant)
    # The replay works: in this process it gives the reference's answers to most public cases.
    passed, total = _replays_the_public_cases(assignment, variant, recorder)
    assert passed >= total / 2, f"the replay passes only {passed} of {total} public cases: it replays nothing"
    folder = _replay_submission(assignment, recorder, tmp_path / "replay")
    verdicts = grader.grade(folder, only={c.name for c in assignment.checks} - SLOW_CHECKS)
    earned = {v.check.name: round(v.score, 3) for v in verdicts if v.score and v.check.visibility != "visible"}
    assert not earned, f"answers recorded on the public cases earn points under a secret: {earned}"
    # ... because it looked its calls up and found none, not because it failed to import: the visible checks,
    # whose cases are the public ones, earn from the same replay.
    assert any(v.score for v in verdicts if v.check.visibility == "visible"), [v.output[:200] for v in verdicts]


# --- the warning where no course secret is set ---


@pytest.fixture
def broken_submission(tmp_path) -> Path:
    """An ngram submission that does not import: graded in a moment."""
    folder = tmp_path / "class" / "alice"
    folder.mkdir(parents=True)
    (folder / "ngram.py").write_text("def pad(:\n")
    return folder


@pytest.mark.parametrize("secret", [None, TEST_SECRET])
def test_grade_warns_without_a_course_secret(broken_submission, tmp_path, monkeypatch, secret):
    if secret is None:
        monkeypatch.delenv(SECRET_ENV, raising=False)
    else:
        monkeypatch.setenv(SECRET_ENV, secret)
    out = invoke("grade", "ngram", broken_submission, "--results", tmp_path / "results.json", "--jobs", "1")
    assert out.exit_code == 0, out.output
    warnings = [line for line in out.stderr.splitlines() if f"{SECRET_ENV} is not set" in line]
    if secret is None:
        assert len(warnings) == 1 and "this grading uses the public default secret" in warnings[0], out.stderr
    else:
        assert not warnings, out.stderr


@pytest.mark.parametrize("secret", [None, TEST_SECRET])
def test_regrade_warns_without_a_course_secret(broken_submission, tmp_path, monkeypatch, secret):
    if secret is None:
        monkeypatch.delenv(SECRET_ENV, raising=False)
    else:
        monkeypatch.setenv(SECRET_ENV, secret)
    out = invoke("regrade", "ngram", broken_submission.parent, "-o", tmp_path / "out" / "scores.csv", "--jobs", "1")
    assert out.exit_code == 0, out.output
    warnings = [line for line in out.stderr.splitlines() if f"{SECRET_ENV} is not set" in line]
    if secret is None:
        assert len(warnings) == 1 and "this regrade uses the public default secret" in warnings[0], out.stderr
    else:
        assert not warnings, out.stderr
