"""Grading runs on one machine at once share nothing: sandbox slots are leased."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lmgrade.sandbox import lease
from lmgrade.sandbox.privileges import sandbox_user

# Slow: runs gradings side by side.
pytestmark = pytest.mark.slow

SLOW = """
import time
BOS, EOS, UNK = "<s>", "</s>", "<unk>"

def pad(sentence, n):
    time.sleep(30)
"""


def grade_command(submission, results, *extra):
    return [sys.executable, "-m", "lmgrade.cli", "grade", "ngram", str(submission), "--results", str(results), *extra]


def test_four_gradings_at_once_lose_nothing(reference_submission, tmp_path):
    for round_ in range(2):
        paths = [tmp_path / f"results-{round_}-{i}.json" for i in range(4)]
        procs = [
            subprocess.Popen(
                grade_command(reference_submission, p, "--jobs", "2"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for p in paths
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        for path in paths:
            document = json.loads(path.read_text())
            lost = [t["output"] for t in document["tests"] if t["score"] < t["max_score"]]
            assert document["score"] == 100, lost


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _pipes_of(pid: int | str) -> set[str]:
    pipes = set()
    for fd in os.scandir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if (target := os.readlink(fd.path)).startswith("pipe:"):
                pipes.add(target)
    return pipes


def _slots_of_servers(grader: int) -> set[int]:
    """The sandbox slots that the fork servers of the grading process `grader` hold open.

    Other gradings on the machine (a parallel test run) hold slots of their own: only these are
    the killed grading's. Its servers (started by it, or forked by a zygote) talk to it over pipes."""
    folder = str(lease.lease_dir())
    try:
        ours = _pipes_of(grader)
    except OSError:
        return set()
    slots = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or entry.name == str(grader):
            continue
        try:
            if not _pipes_of(entry.name) & ours:
                continue
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                target = os.readlink(fd.path)
                if target.startswith(folder + os.sep + "slot-"):
                    slots.add(int(target.rsplit("-", 1)[1]))
        except (OSError, ValueError, IndexError):
            pass
    return slots


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to watch the sandbox's processes")
def test_a_run_killed_with_sigkill_leaves_no_lease_behind(tmp_path):
    submission = tmp_path / "slow"
    submission.mkdir()
    (submission / "ngram.py").write_text(SLOW)
    proc = subprocess.Popen(
        grade_command(submission, tmp_path / "results.json", "--jobs", "2"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Mid-grading: its fork servers hold slots and a child sleeps in pad.
        assert _wait_for(lambda: len(_slots_of_servers(proc.pid)) == 2, 60), "the run never took its slots"
        taken = _slots_of_servers(proc.pid)
        uids = [u for u in map(sandbox_user, taken) if u is not None]
        if uids:
            assert _wait_for(lambda: any(_processes_of(u) for u in uids), 30), "no sandboxed child started"
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _wait_for(lambda: not (set(lease.held_slots()) & taken), 10), "a lease outlived its run"
    assert _wait_for(lambda: not any(_processes_of(u) for u in uids), 10), "sandboxed processes outlived the run"
