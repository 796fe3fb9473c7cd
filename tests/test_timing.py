"""Timing checks: laps on the fork server's clock, the verdict against the reference, the device policy."""

from __future__ import annotations

import os
import textwrap
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sandbox_fixtures import sandbox_pool, submission_of

from lmgrade import Case, CaseContext, Check, Mistake, Tolerance
from lmgrade.boundary.protocol import NONCE, TICK_END, TICK_READY, pack_tick
from lmgrade.core.device import DeviceError, cuda_available, resolve
from lmgrade.declare.assignment import AssignmentError, bind, load_assignment, on_device
from lmgrade.grading.timing_laps import Timing
from lmgrade.grading.timing_verdicts import Explaining, Laps, clear, grade_timing, judge_case
from lmgrade.sandbox.limits import Limits
from lmgrade.sandbox.pool import Output
from lmgrade.sandbox.stopwatch import Timekeeper

ROOT = Path(__file__).resolve().parents[1]

TIMED = textwrap.dedent("""
    import time
    from lmgrade.sandbox import stopwatch

    # A submission that freezes every timer it can reach.
    time.perf_counter = time.monotonic = time.time = lambda: 0.0

    def slow(nonce):
        deadline = time.process_time() + 0.05
        while time.process_time() < deadline:
            pass
        return nonce % 1000

    def fast(nonce):
        return nonce % 1000

    def ends_early(nonce):
        stopwatch.stop([0.0])   # a second END, before the harness's
        return 0.0

    def asks_twice(nonce):
        stopwatch.start()       # a READY inside the lap: no nonce for it
        return 0.0
""")


@pytest.fixture(scope="module")
def victim(tmp_path_factory):
    return submission_of(tmp_path_factory, "timed", TIMED)


@pytest.fixture(scope="module")
def pool():
    with sandbox_pool() as p:
        yield p


def timed_run(pool, victim, fn, laps=5, allowed=None):
    return pool.run(
        scenario="sandbox_fixtures.scenarios:timed",
        submission=victim,
        files=["victim.py"],
        cases=[{"fn": fn, "laps": laps}],
        limits=Limits(cpu_s=5, wall_s=10),
        laps=laps if allowed is None else allowed,
    )


def test_laps_are_timed_on_the_servers_clock_whatever_the_child_patches(pool, victim):
    report = timed_run(pool, victim, "slow")
    assert report.outcomes[0].kind == "ok"
    assert len(report.laps) == 5
    for case, nonce, seconds, fingerprint in report.laps:
        assert case == 0 and seconds >= 0.045 and fingerprint == [nonce % 1000]
    assert len({nonce for _, nonce, _, _ in report.laps}) == 5  # a fresh nonce every lap
    fast = timed_run(pool, victim, "fast")
    assert max(t for _, _, t, _ in fast.laps) < min(t for _, _, t, _ in report.laps)


def test_each_case_has_its_time_on_the_servers_clock(pool, victim):
    report = timed_run(pool, victim, "slow", laps=3)
    assert report.outcomes[0].seconds >= 0.15


@pytest.mark.parametrize("fn", ["ends_early", "asks_twice"])
def test_a_child_that_breaks_the_lap_order_gets_no_more_nonces(pool, victim, fn):
    report = timed_run(pool, victim, fn)
    assert report.outcomes[0].kind == "error"
    assert len(report.laps) <= 1


def test_no_more_laps_than_the_run_allows(pool, victim):
    report = timed_run(pool, victim, "fast", laps=5, allowed=3)
    assert len(report.laps) == 3 and report.outcomes[0].kind == "error"


def test_timekeeper_answers_ready_with_a_nonce_and_times_the_lap():
    r, w = os.pipe()
    keeper = Timekeeper(2, w)
    keeper.feed(pack_tick(TICK_READY, 0))
    (nonce,) = NONCE.unpack(os.read(r, NONCE.size))
    keeper.feed(pack_tick(TICK_END, 0, (1.5, 2.5)))
    assert keeper.laps[0][:2] == [0, nonce] and keeper.laps[0][3] == [1.5, 2.5] and keeper.laps[0][2] >= 0
    keeper.feed(b"\xff" * 9)  # not a tick: no more nonces, the pipe closed
    assert keeper.broken and os.read(r, 8) == b""


def test_a_run_given_nonces_hands_them_out_lap_by_lap(pool, victim):
    chosen = [[11_000 + k for k in range(3)]]
    report = pool.run(
        scenario="sandbox_fixtures.scenarios:timed",
        submission=victim,
        files=["victim.py"],
        cases=[{"fn": "fast", "laps": 5}],
        limits=Limits(cpu_s=5, wall_s=10),
        laps=5,
        nonces=chosen,
    )
    nonces = [nonce for _, nonce, _, _ in report.laps]
    # The chosen ones in order, then fresh ones past the list; each lap's fingerprint is of its own nonce.
    assert nonces[:3] == chosen[0] and len(set(nonces)) == 5 and not set(nonces[3:]) & set(chosen[0])
    assert [fp for *_, fp in report.laps][:3] == [[n % 1000] for n in chosen[0]]


def test_timekeeper_gives_each_case_its_own_nonces_in_order():
    r, w = os.pipe()
    keeper = Timekeeper(4, w, [[5, 6], [7]])
    given = []
    for case in (1, 0, 0, 1):
        keeper.feed(pack_tick(TICK_READY, case))
        given.append(NONCE.unpack(os.read(r, NONCE.size))[0])
        keeper.feed(pack_tick(TICK_END, case, (0.0,)))
    assert given[:3] == [7, 5, 6] and given[3] not in (5, 6, 7)


class _LappedPool:
    """Stands in for the sandbox: each side's laps, of the nonces it was given, with the fingerprints of
    the side's function of the nonce."""

    def __init__(self, fingerprint):
        self.fingerprint, self.nonces = fingerprint, []

    def run(self, *, submission, cases, laps, nonces, **_):
        self.nonces.append((submission.name, nonces))
        side = submission.name
        seconds = 0.02 if side == "submission" else 0.01  # 2x: within the bound, not clear of it after a round
        laps_ = [(0, n, seconds, self.fingerprint[side](n)) for n in nonces[0]]
        return SimpleNamespace(
            outcomes=[SimpleNamespace(kind="ok")], laps=laps_, output=Output(), wall_s=0.1, defences={}
        )


def _timed_grading(tmp_path, fingerprint):
    check = replace(_check(), points=4.0)
    asked = []
    pool = _LappedPool(fingerprint)
    verdict = grade_timing(
        pool,
        check,
        1,
        tmp_path / "submission",
        tmp_path / "reference",
        lambda: asked.append(1) or {},
        [Case("x", {})],
    )
    return verdict, pool.nonces, asked


def test_both_sides_of_a_round_get_the_same_fresh_nonces_and_the_references_laps_hold_its_fingerprints(tmp_path):
    verdict, nonces, asked = _timed_grading(tmp_path, {"submission": lambda n: [n % 7], "reference": lambda n: [n % 7]})
    assert verdict.score == verdict.check.points, verdict.output
    sides = [side for side, _ in nonces]
    assert sides == ["submission", "reference"] * 2
    for (_, mine), (_, theirs) in zip(nonces[::2], nonces[1::2]):
        assert mine == theirs and len(mine[0]) == 5
    assert nonces[0][1] != nonces[2][1]  # a round's nonces are its own
    assert asked == []  # nothing recomputed here: the reference's modules were never asked for


class _TwoFacedPool(_LappedPool):
    """A submission slow and right on the laps `right` names (their positions in a run), fast and wrong on
    every other: the reference's fingerprint is the nonce itself."""

    def __init__(self, right):
        super().__init__({"submission": lambda n: [float(n)], "reference": lambda n: [float(n)]})
        self.right = right

    def run(self, *, submission, cases, laps, nonces, **_):
        report = super().run(submission=submission, cases=cases, laps=laps, nonces=nonces)
        if submission.name == "submission":
            report.laps = [
                (0, n, 0.02, [float(n)]) if k in self.right else (0, n, 0.002, [0.0])
                for k, (_, n, _, _) in enumerate(report.laps)
            ]
        return report


@pytest.mark.parametrize("wrong_lap", range(5))
def test_a_submission_fast_and_wrong_on_any_one_lap_earns_no_timing_points(tmp_path, wrong_lap):
    # Right on every lap but one, whichever: no choice of laps to verify could spare it, for every lap is.
    pool = _TwoFacedPool(right=set(range(5)) - {wrong_lap})
    verdict = grade_timing(
        pool, replace(_check(), points=4.0), 1, tmp_path / "submission", tmp_path / "reference", dict, [Case("x", {})]
    )
    assert verdict.score == 0 and "differ from the reference" in verdict.output


def test_a_submission_right_on_every_lap_gets_the_same_verdict_in_every_grading(tmp_path):
    verdicts = {
        (v.score, v.cases[0][1].passed)
        for v in (
            grade_timing(
                _TwoFacedPool(right=set(range(5))),
                replace(_check(), points=4.0),
                1,
                tmp_path / "submission",
                tmp_path / "reference",
                dict,
                [Case("x", {})],
            )
            for _ in range(5)
        )
    }
    assert verdicts == {(4.0, True)}


def test_a_fingerprint_unlike_the_references_own_lap_fails(tmp_path):
    verdict, _, asked = _timed_grading(tmp_path, {"submission": lambda n: [0.0], "reference": lambda n: [n % 7 + 1]})
    assert verdict.score == 0 and "differ from the reference" in verdict.output
    assert asked == []


# --- the verdict ---


def _check(**timing) -> Check:
    return Check(
        "speed",
        "a timed call",
        scenario=lambda m, a: None,
        make_cases=lambda ctx: [],
        tolerance=Tolerance(rtol=1e-3, atol=1e-3),
        timing=Timing(setup=lambda m, a: None, step=lambda s, n: [0.0], warmup=1, laps=4, rounds=2, **timing),
    )


def _laps(seconds: float, n: int = 10, wrong: bool = False) -> Laps:
    return Laps([seconds] * (n - 2), [(i, [float(i) + (100 if wrong else 0)]) for i in range(n)])


def _judge(student: Laps, reference: Laps = None, device: str = "cpu"):
    check = _check()
    return judge_case(check, Case("x", {}), reference or _laps(0.01), student, lambda nonce: [float(nonce)], device)


def test_within_the_bound_passes_and_says_the_times():
    verdict = _judge(_laps(0.025))
    assert verdict.passed and "2.50x" in verdict.message


def test_slower_than_the_bound_fails():
    verdict = _judge(_laps(0.035))
    assert not verdict.passed and "slower than the allowed 3x" in verdict.message


def test_cuda_has_its_own_bound():
    assert not _judge(_laps(0.025), device="cuda").passed


def test_far_faster_than_the_reference_is_flagged_not_paid():
    verdict = _judge(_laps(0.0005))
    assert not verdict.passed and "flagged for review" in verdict.message


def test_a_fingerprint_unlike_the_references_fails_however_fast():
    verdict = _judge(_laps(0.01, wrong=True))
    assert not verdict.passed and "differ from the reference" in verdict.message


def _explaining(name: str = "attention") -> Explaining:
    return Explaining(name, Mistake("scaled", "the scores are scaled wrong", lambda modules: None), lambda: {})


@pytest.mark.parametrize("seconds, passes", [(0.02, True), (0.05, False)])
def test_laps_that_are_exactly_a_named_mistakes_are_timed_on_their_own(seconds, passes):
    # Every lap's answers are what the failed component's named mistake gives: that check judges them, and
    # the time is judged as a right answer's would be, within the bound or not.
    verdict = judge_case(
        _check(),
        Case("x", {}),
        _laps(0.01),
        _laps(seconds, wrong=True),
        lambda nonce: [float(nonce)],
        "cpu",
        wrong="attention",
        mistaken=[(_explaining(), lambda nonce: [float(nonce) + 100])],
    )
    assert verdict.passed is passes
    assert "the scores are scaled wrong (see attention)" in verdict.message
    assert ("slower than the allowed" in verdict.message) is not passes


def test_laps_a_named_mistake_explains_only_in_part_earn_nothing():
    student = _laps(0.02, wrong=True)
    student.laps[-1] = (student.laps[-1][0], [-1.0])  # one lap neither the reference's nor the mistake's
    verdict = judge_case(
        _check(),
        Case("x", {}),
        _laps(0.01),
        student,
        lambda nonce: [float(nonce)],
        "cpu",
        wrong="attention",
        mistaken=[(_explaining(), lambda nonce: [float(nonce) + 100])],
    )
    assert not verdict.passed and "it runs your code that failed attention" in verdict.message


def test_missing_laps_fail():
    verdict = _judge(_laps(0.01, n=6))
    assert not verdict.passed and "finished 6 of 10" in verdict.message


# --- where a check runs: assignment.toml's device and policy ---


def _cuda_check(**kw) -> Check:
    return replace(_check(), device="cuda", points=3.0, **kw)


def test_a_cuda_check_runs_on_cuda_where_there_is_one():
    assert on_device(_cuda_check(), "cuda").device == "cuda"


def test_without_cuda_the_cpu_policy_runs_it_on_the_cpu():
    check = on_device(_cuda_check(when_absent="cpu"), "cpu")
    assert check.device == "cpu" and check.points == 3.0 and not check.unavailable


def test_without_cuda_not_counted_lists_it_at_zero_with_the_reason():
    check = on_device(_cuda_check(when_absent="not_counted"), "cpu")
    assert check.points == 0.0 and "needs a CUDA GPU" in check.unavailable


def test_the_transformer_policy_comes_from_its_assignment_toml(tmp_path):
    toml = (ROOT / "assignments/transformer/assignment.toml").read_text()
    assert 'when_absent = "cpu"' in toml
    changed = tmp_path / "transformer"
    changed.mkdir()
    (changed / "assignment.toml").write_text(toml.replace('when_absent = "cpu"', 'when_absent = "not_counted"'))
    for name in ("templates",):
        (changed / name).symlink_to(ROOT / "assignments/transformer" / name)
    spec = load_assignment(changed / "assignment.toml")
    from lmgrade.plugins.transformer.checks import transformer_checks

    checks = {c.name: c for c in bind(spec, transformer_checks()).on("cpu").checks}
    assert checks["attention_speed"].points == 0 and checks["attention_speed"].unavailable
    assert checks["training"].unavailable and not checks["attention"].unavailable
    on_gpu = {c.name: on_device(c, "cuda") for c in bind(spec, transformer_checks()).checks}
    assert on_gpu["attention_speed"].device == "cuda" and on_gpu["attention_speed"].points == 4


def test_a_bad_device_in_assignment_toml_names_the_file_and_key(tmp_path):
    folder = tmp_path / "ngram"
    folder.mkdir()
    toml = (ROOT / "assignments/ngram/assignment.toml").read_text()
    first_check = toml.index("[checks.")
    end = toml.index("\n", first_check)
    (folder / "assignment.toml").write_text(toml[:end] + '\ndevice = "tpu"' + toml[end:])
    (folder / "templates").symlink_to(ROOT / "assignments/ngram/templates")
    with pytest.raises(AssignmentError, match=r"assignment.toml: \[checks\.\w+\] device: 'tpu'"):
        load_assignment(folder / "assignment.toml")


def test_device_auto_and_cpu_resolve_here():
    assert resolve("cpu") == "cpu"
    assert resolve("auto") == ("cuda" if cuda_available() else "cpu")


@pytest.mark.skipif(cuda_available(), reason="this machine has CUDA")
def test_device_cuda_without_cuda_is_a_usage_error():
    with pytest.raises(DeviceError, match="no CUDA GPU"):
        resolve("cuda")


def test_case_context_carries_the_device():
    import numpy as np

    from lmgrade.plugins.transformer.checks import attention_speed_cases

    (case,) = attention_speed_cases(CaseContext(rng=np.random.default_rng(0), variant={}, device="cpu"))
    assert case.args["device"] == "cpu" and "cpu" in case.label


def test_a_check_not_counted_is_listed_in_results_json_with_its_reason(tmp_path):
    import json

    from lmgrade.declare import catalog
    from lmgrade.declare.assignment import Assignment
    from lmgrade.grading.submission_grading import grade_submission

    assignment, variant = catalog.load("ngram")
    first = on_device(replace(assignment.checks[0], device="cuda", when_absent="not_counted"), "cpu")
    run = grade_submission(
        Assignment(assignment.spec, [first, assignment.checks[1]]),
        variant,
        ROOT / "reference" / "ngram",
        results=tmp_path / "results.json",
        jobs=1,
    )
    tests = json.loads((tmp_path / "results.json").read_text())["tests"]
    assert tests[0]["max_score"] == 0 and tests[0]["score"] == 0 and "needs a CUDA GPU" in tests[0]["output"]
    assert tests[1]["score"] == tests[1]["max_score"] > 0
    assert run.max_score == assignment.checks[1].points


needs_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


@needs_cuda
def test_on_cuda_the_reference_passes_and_a_query_loop_fails(tmp_path):
    from lmgrade.declare import catalog
    from lmgrade.declare.flawed import write_flawed
    from lmgrade.grading.submission_grading import grade_submission
    from lmgrade.plugins.transformer.bugs import BUGS

    assignment, variant = catalog.load("transformer")
    assignment = assignment.on("cuda")
    only = [c for c in assignment.checks if c.name in ("training", "attention_speed", "train_step_speed")]
    assert all(c.device == "cuda" for c in only)
    from lmgrade.declare.assignment import Assignment

    graded = Assignment(assignment.spec, only, device="cuda")
    run = grade_submission(graded, variant, ROOT / "reference" / "transformer", jobs=1)
    assert run.score == run.max_score, [v.output for v in run.verdicts]
    slow = write_flawed(
        ROOT / "reference" / "transformer", assignment.spec.files, tmp_path / "loop", [BUGS["attention_query_loop"]]
    )
    verdicts = {v.check.name: v for v in grade_submission(graded, variant, slow, jobs=1).verdicts}
    assert verdicts["attention_speed"].score == 0 and "slower than the allowed" in verdicts["attention_speed"].output


def _run(seconds: list[float], kind: str = "ok"):
    """A sandboxed run of one case: its outcome and its laps (case, nonce, time, fingerprint)."""
    return SimpleNamespace(
        outcomes=[SimpleNamespace(kind=kind)], laps=[(0, i, t, [0.0]) for i, t in enumerate(seconds)]
    )


@pytest.mark.parametrize(
    "student_s, kind, is_clear",
    [
        (0.012, "ok", True),  # 1.2x against a bound of 3: a second round could not change the verdict
        (0.016, "ok", False),  # 1.6x: past half the bound, timed again
        (0.040, "ok", False),  # slower than the bound: always timed twice before failing
        (0.0015, "ok", False),  # suspiciously fast: timed again before being flagged
        (0.012, "timeout", False),  # a case that did not answer
    ],
)
def test_a_round_ends_the_timing_only_where_every_case_passes_by_a_wide_margin(student_s, kind, is_clear):
    check = _check()
    # The first lap of each run is its warm-up: its time (1 s) never counts.
    runs = {"submission": [_run([1.0, *[student_s] * 4], kind)], "reference": [_run([1.0, *[0.01] * 4])]}
    assert clear(check, runs, 1) is is_clear
    # On CUDA the bound is 2x: 1.2x is past half of it.
    assert not clear(replace(check, device="cuda"), runs, 1)


def test_a_verdict_after_one_round_counts_the_laps_of_one_round():
    check = _check()
    one_round = Laps([0.012] * 4, [(i, [float(i)]) for i in range(5)])
    verdict = judge_case(check, Case("x", {}), _laps(0.01), one_round, lambda nonce: [float(nonce)], "cpu", rounds=1)
    assert verdict.passed, verdict.message
    short = judge_case(check, Case("x", {}), _laps(0.01), one_round, lambda nonce: [float(nonce)], "cpu")
    assert not short.passed and "finished 5 of 10 timed calls" in short.message


# --- the laps a child reports, fuzzed: a verdict always, paid only where every lap is right

_fingerprints = st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=3)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), _fingerprints), min_size=0, max_size=12),
    st.lists(st.floats(1e-5, 1.0), min_size=1, max_size=10),
)
def test_a_verdict_on_any_laps_is_paid_only_where_every_lap_is_the_references(laps, seconds):
    """The reference's fingerprint of nonce n is [n]; the child's laps may claim any fingerprints and times."""
    student = Laps(seconds, laps)
    verdict = judge_case(_check(), Case("x", {}), _laps(0.01), student, lambda nonce: [float(nonce)], "cpu")
    every_lap_right = all(fp == [float(nonce)] for nonce, fp in laps)
    assert isinstance(verdict.message, str)
    assert not verdict.passed or (every_lap_right and len(laps) >= 10), (laps, verdict.message)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=40) | st.builds(pack_tick, st.integers(0, 3), st.integers(-2, 2)), max_size=12))
def test_the_timekeeper_takes_any_bytes_without_raising(chunks):
    r, w = os.pipe()
    try:
        keeper = Timekeeper(4, w, [[5, 6], [7]])
        for chunk in chunks:
            keeper.feed(chunk)
        assert len(keeper.laps) <= 4 and all(len(lap) == 4 for lap in keeper.laps)
    finally:
        os.close(r)
        if not keeper.broken:
            os.close(w)


def test_a_hidden_timing_check_says_its_kind_of_failure_and_no_time():
    from lmgrade.grading.feedback import WRONG_HIDDEN
    from lmgrade.grading.timing_verdicts import TIME_HIDDEN, hidden

    slow = _judge(_laps(0.035))
    wrong = _judge(_laps(0.02, wrong=True))
    passed = _judge(_laps(0.02))
    assert hidden(slow).message == TIME_HIDDEN and "ms" not in TIME_HIDDEN
    assert hidden(wrong).message == WRONG_HIDDEN
    assert hidden(passed).passed and hidden(passed).message == ""
