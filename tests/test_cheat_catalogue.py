"""Cheats earn nothing: every submission of the cheat catalogue (tests/cheats), which computes nothing real,
scores exactly 0, and none of its attacks on the sandbox succeeds (the suite grades a sample, `_params`;
`python3 dev.py study -k cheat` all of them).

A cheat's attack says "CHEAT-FOUND: ..." where the feedback shows it when it gets what the sandbox should
deny (a file, another process's memory, state left by an earlier run); the daemon attack's daemon is looked
for by its name once its own grading is over, and what cheats may leave outside the sandbox (System V
objects, files in the machine's shared folders) after each grading.
"""

from __future__ import annotations

import ast
import ctypes
import os
import signal
from pathlib import Path

import pytest
from cheats.catalogue import (
    CHEATS,
    HERE,
    LEFT_FILES,
    assignments,
    cheats_of,
    daemon_name,
    files_of,
    ipc_keys,
    source,
    write_cheat,
)

from lmgrade.declare import catalog

FOUND = "CHEAT-FOUND"
IPC_RMID = 0


def _remove_ipc(keys) -> list[str]:
    """Remove the System V objects of these keys from this machine; what was there."""
    libc = ctypes.CDLL(None, use_errno=True)
    left = []
    for key in keys:
        shmid = libc.shmget(key, 0, 0)
        if shmid >= 0:
            libc.shmctl(shmid, IPC_RMID, None)
            left.append(f"shared memory {key:#x}")
        queue = libc.msgget(key, 0)
        if queue >= 0:
            libc.msgctl(queue, IPC_RMID, None)
            left.append(f"message queue {key:#x}")
    return left


def _remove_left_files() -> list[str]:
    """Remove the files the persistence attacks name their own from the machine's shared folders; which."""
    left = []
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run", os.path.expanduser("~")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(LEFT_FILES):
                Path(folder, name).unlink(missing_ok=True)
                left.append(str(Path(folder, name)))
    return left


def _left_behind(names) -> list[str]:
    """What cheats of these assignments left on this machine, outside every sandbox (removed)."""
    return _remove_ipc([key for name in names for key in ipc_keys(name)]) + _remove_left_files()


@pytest.fixture(scope="module")
def clean_machine():
    """Nothing a cheat may leave outside its sandbox (System V objects, files) before the cheats, nor after."""

    _left_behind(assignments())
    yield
    _left_behind(assignments())


def _stray_daemons(assignment: str) -> list[int]:
    """Processes named as the daemon attack of `assignment` names its own, killed: each one the sandbox let live
    (looked for once that cheat's grading is over: while it runs, its daemon is alive by design)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == daemon_name(assignment):
                    found.append(int(pid))
        except OSError:
            pass
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return found


def test_the_catalogue_builds_the_contracts_files_for_every_assignment(tmp_path):
    """Each template holds the contract's files, every cheat's files parse, and the README lists every cheat."""
    assert set(assignments()) <= set(catalog.assignment_folders())
    for name in assignments():
        assert set(files_of(name)) == set(catalog.load(name)[0].spec.files), name
        for cheat in cheats_of(name):
            for filename in files_of(name):
                ast.parse(source(name, cheat, filename), filename=f"{name}/{cheat.name}/{filename}")
    readme = (HERE / "README.md").read_text()
    assert all(f"`{cheat.name}`" in readme for cheat in CHEATS)
    folder = write_cheat("ngram", "noise", tmp_path / "noise")
    assert sorted(p.name for p in folder.iterdir()) == ["ngram.py"]


def _paid(verdicts) -> list[str]:
    """Each check that paid something, why (the first lines of its feedback)."""
    return [
        f"{v.check.name} {v.score:g}/{v.max_score:g}: " + " | ".join(v.output.strip().splitlines()[:4])
        for v in verdicts
        if v.score > 0
    ]


# The whole catalogue, every cheat against every assignment and every check, takes hours on two cores: a
# study (`python3 dev.py study -k cheat`). The suite grades a sample: against ngram, whose grading is the
# quickest, noise and three attacks (forged frames, IPC left behind, patched comparisons), and against lstm
# the fake work composed checks once paid for (noise, NaN, constants).
SAMPLED_ASSIGNMENT = "ngram"
SAMPLED_CHEATS = ("noise", "forge_frames", "persist_ipc", "patch_comparisons")
FAKE_WORK = ("noise", "nan", "constant")
FAKE_WORK_SAMPLED = ("lstm",)


def _in_the_suite(name: str, cheat: str) -> bool:
    if name == SAMPLED_ASSIGNMENT:
        return cheat in SAMPLED_CHEATS
    return cheat in FAKE_WORK and name in FAKE_WORK_SAMPLED


def _params():
    return [
        pytest.param(
            name, c.name, id=f"{name}-{c.name}", marks=[] if _in_the_suite(name, c.name) else [pytest.mark.study]
        )
        for name in assignments()
        for c in cheats_of(name)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "cheat"), _params())
def test_a_cheat_scores_nothing(graders, clean_machine, tmp_path, assignment, cheat):
    grader = graders(assignment)
    verdicts = grader.grade(write_cheat(assignment, cheat, tmp_path / cheat))
    daemons = _stray_daemons(assignment) if cheat == "daemon" else []
    score = sum(v.score for v in verdicts)
    found = sorted({line.strip() for v in verdicts for line in v.output.splitlines() if FOUND in line})
    problems = _paid(verdicts) + found + [f"a daemon outlived its run: pid {pid}" for pid in daemons]
    problems += [f"left on the machine: {what}" for what in _left_behind([assignment])]
    assert score == 0 and not problems, f"{assignment}/{cheat} scored {score:g}:\n" + "\n".join(problems)
