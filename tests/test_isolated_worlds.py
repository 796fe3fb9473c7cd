"""Every submission in a world of its own: a run finds nothing of another run in its memory or its parent's,
leaves no SysV IPC object behind, and reads only what it needs (no assignment's checks, known mistakes or bugs,
nothing of another assignment).
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from sandbox_fixtures import sandbox_pool, submission_of

from helpers import ROOT, TEST_SECRET
from lmgrade.declare import catalog
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.sandbox import ipc, landlock, privileges
from lmgrade.sandbox.limits import Limits

# A submission that computes nothing: at import, inside the perplexity check's run, it looks through its own
# memory (a copy of its parent's) and its parent's for the result frames another submission's run of that
# check sent (process_vm_readv reads without faulting on what is not mapped), and sends them as its own.
THIEF = textwrap.dedent('''
    import ctypes, gc, os, re, struct, sys

    CASE_START, CASE_RESULT, DONE = 2, 3, 4
    FRAME = struct.Struct(">BiQ")
    RESULT_FD = 3
    REGION = 1 << 20


    class IOVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


    libc = ctypes.CDLL(None, use_errno=True)
    libc.process_vm_readv.restype = ctypes.c_ssize_t


    def peek(pid, address, size):
        buf = ctypes.create_string_buffer(size)
        local, remote = IOVec(ctypes.cast(buf, ctypes.c_void_p), size), IOVec(address, size)
        n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        return buf.raw[:n] if n > 0 else b""


    def regions():
        """The 1 MiB regions the objects live in: the heap, the allocator's arenas."""
        found = {id(o) & ~(REGION - 1) for o in gc.get_objects()}
        docs = [m.__doc__ for m in list(sys.modules.values()) if isinstance(getattr(m, "__doc__", None), str)]
        return sorted(found | {id(d) & ~(REGION - 1) for d in docs})


    def the_run():
        frame = sys._getframe()
        while frame is not None:
            if {"scenario", "cases", "start"} <= set(frame.f_locals):
                return frame.f_locals
            frame = frame.f_back


    def stolen(n):
        wire = sys.modules["lmgrade.boundary.wire"]
        header = re.compile(re.escape(bytes([CASE_RESULT, 0, 0, 0])) + b"[\\\\x00-" + bytes([n - 1]) + b"]", re.S)
        answers = {}
        for pid in (os.getpid(), os.getppid()):
            for base in regions():
                memory = peek(pid, base, REGION + 4096)
                for match in header.finditer(memory):
                    at = match.start()
                    index, size = memory[at + 4], int.from_bytes(memory[at + 5 : at + 13], "big")
                    payload = memory[at + 13 : at + 13 + size]
                    if index in answers or not 8 < size < 4096 or len(payload) != size:
                        continue
                    try:
                        value = wire.decode(payload)
                    except Exception:
                        continue
                    if isinstance(value, dict) and isinstance(value.get("ok"), float):
                        answers[index] = payload
        return answers


    run = the_run()
    if run is not None and getattr(run["scenario"], "__name__", "") == "perplexity":
        n = len(run["cases"])
        answers = stolen(n)
        if len(answers) == n:
            for index in range(run["start"], n):
                os.write(RESULT_FD, FRAME.pack(CASE_START, index, 0))
                os.write(RESULT_FD, FRAME.pack(CASE_RESULT, index, len(answers[index])) + answers[index])
            os.write(RESULT_FD, FRAME.pack(DONE, -1, 0))
            os._exit(0)
''')


def _submissions(tmp_path: Path) -> tuple[Path, Path]:
    spec = catalog.load_spec("ngram")
    honest, thief = tmp_path / "honest", tmp_path / "thief"
    honest.mkdir()
    thief.mkdir()
    shutil.copyfile(spec.reference_folder() / "ngram.py", honest / "ngram.py")
    (thief / "ngram.py").write_text(THIEF)
    return honest, thief


def _grader(jobs: int) -> Grader:
    assignment, variant = catalog.load("ngram")
    return Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=jobs)


def test_a_submission_finds_no_answers_of_one_graded_before_it(tmp_path):
    honest, thief = _submissions(tmp_path)
    with _grader(jobs=1) as grader:
        (right,) = grader.grade(honest, only={"perplexity"})
        (stolen,) = grader.grade(thief, only={"perplexity"})
    assert right.score == right.check.points > 0
    assert stolen.score == 0, stolen.output


def test_a_submission_finds_no_answers_of_one_graded_beside_it(tmp_path):
    honest, thief = _submissions(tmp_path)
    with _grader(jobs=2) as grader:
        (first,) = grader.grade(honest, only={"perplexity"})
        verdicts = {}
        graders = [
            threading.Thread(target=lambda f=folder: verdicts.setdefault(f, grader.grade(f, only={"perplexity"})))
            for folder in (honest, thief)
        ]
        for thread in graders:
            thread.start()
        for thread in graders:
            thread.join()
    assert first.score == verdicts[honest][0].score == first.check.points
    assert verdicts[thief][0].score == 0, verdicts[thief][0].output


# --- what a run leaves ---------------------------------------------------------------------------------------

IPC = textwrap.dedent("""
    import ctypes, os

    libc = ctypes.CDLL(None, use_errno=True)
    IPC_CREAT = 0o1000

    def make_ipc(key):
        return [libc.shmget(key, 4096, IPC_CREAT | 0o600), libc.msgget(key + 1, IPC_CREAT | 0o600),
                libc.semget(key + 2, 1, IPC_CREAT | 0o600)]

    def find_ipc(key):
        return [libc.shmget(key, 0, 0), libc.msgget(key + 1, 0), libc.semget(key + 2, 0, 0)]

    def parent():
        return os.getppid()
""")


def _run(pool, folder, fn, *args):
    report = pool.run(
        scenario="sandbox_fixtures.scenarios:call",
        submission=folder,
        files=["victim.py"],
        cases=[{"fn": fn, "args": list(args)}],
        limits=Limits(cpu_s=5, wall_s=20),
    )
    return report.outcomes[0], report


@pytest.fixture(scope="module")
def ipc_user(tmp_path_factory):
    return submission_of(tmp_path_factory, "ipc_user", IPC)


def _keys_left(key: int) -> list:
    return [o for o in ipc.objects() if key <= o.key <= key + 2]


@pytest.mark.skipif(not Path("/proc/sysvipc").is_dir(), reason="needs SysV IPC (Linux)")
def test_no_ipc_object_outlives_its_run(ipc_user):
    key = 0x4C470000 + random.randrange(1 << 16)
    with sandbox_pool() as pool:
        made, _ = _run(pool, ipc_user, "make_ipc", key)
        assert made.kind == "ok" and min(made.value) >= 0, made  # made, in its own run
        seen, _ = _run(pool, ipc_user, "find_ipc", key)
        assert seen.kind == "ok" and seen.value == [-1, -1, -1], "the next run found them"
        assert _keys_left(key) == [], "they outlived the run"
    with sandbox_pool() as pool:  # a later, unrelated grading
        seen, _ = _run(pool, ipc_user, "find_ipc", key)
        assert seen.kind == "ok" and seen.value == [-1, -1, -1]
    assert _keys_left(key) == []


@pytest.mark.skipif(not Path("/proc/sysvipc").is_dir(), reason="needs SysV IPC (Linux)")
def test_without_a_namespace_the_objects_a_run_made_are_removed_and_no_others():
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x4C480000 + random.randrange(1 << 16)
    kept = libc.msgget(key, 0o1600)  # there before the run: not its own
    before = ipc.snapshot()
    made = [libc.shmget(key + 1, 4096, 0o1600), libc.msgget(key + 2, 0o1600), libc.semget(key + 3, 1, 0o1600)]
    try:
        assert min([kept, *made]) >= 0
        removed = ipc.remove_left_by(os.getuid(), before=before)
        assert {(o.kind, o.key) for o in removed} >= {("shm", key + 1), ("msg", key + 2), ("sem", key + 3)}
        left = {(o.kind, o.key) for o in ipc.objects() if key <= o.key <= key + 3}
        assert left == {("msg", key)}
    finally:
        libc.msgctl(kept, 0, None)


def test_every_run_is_forked_by_a_process_of_its_own(ipc_user):
    """The child's parent is a supervisor forked for that run alone, never the fork server every run shares."""
    with sandbox_pool() as pool:
        parents = [_run(pool, ipc_user, "parent")[0].value for _ in range(3)]
        server = pool._all[0].proc.pid
        started = pool.processes
        trial = 0 if pool._all[0].forked_by_zygote else 1
    assert len(set(parents)) == 3 and server not in parents
    # The fork server and its helper (a trial of IPC namespaces, which a zygote makes once for all it forks),
    # then per run its supervisor and its child, and the supervisor forked ahead for the next run. As root,
    # what a run leaves of its uid is killed from /proc, starting no process.
    assert started == 1 + trial + 3 * 2 + 1


# --- what a run reads ----------------------------------------------------------------------------------------

# The graded pad tries each path it is given, and imports again each module named "import NAME".
PEEKING = textwrap.dedent("""
    import importlib, sys

    def pad(sentence, n):
        seen = {}
        for item in sentence:
            if item.startswith("import "):
                sys.modules.pop(item[len("import "):], None)
                try:
                    importlib.import_module(item[len("import "):])
                    seen[item] = "imported"
                except Exception as exc:
                    seen[item] = type(exc).__name__
                continue
            try:
                with open(item) as f:
                    f.read(1)
                seen[item] = "read"
            except OSError as exc:
                seen[item] = type(exc).__name__
        return seen
""")

# Run in an interpreter that imports lmgrade from `site` (argv[1]), laid out as pip installs the wheel.
INSTALLED = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from lmgrade import catalog
    from lmgrade.grading.grader import Grader
    from lmgrade.grading.oracle import LiveReference
    from lmgrade.sandbox.limits import Limits

    assert Path(catalog.__file__).is_relative_to(sys.argv[1])
    assignment, variant = catalog.load("ngram")
    with Grader(assignment, variant, LiveReference(assignment.spec), secret="s", jobs=1) as grader:
        report = grader.pool.run(
            scenario="lmgrade.plugins.ngram.public.scenarios:pad",
            submission=Path(sys.argv[2]),
            files=["ngram.py"],
            cases=[{"sentence": json.loads(sys.argv[3]), "n": 1}],
            limits=Limits(cpu_s=10, wall_s=30),
        )
    (out,) = report.outcomes
    print(json.dumps({"kind": out.kind, "value": out.value, "error": out.error}))
""")


def _install_like_a_wheel(site: Path) -> Path:
    """lmgrade's packages copied into `site` as the wheel lays them out (pyproject's package-dir)."""
    package = site / "lmgrade"
    ignore = shutil.ignore_patterns(".*")
    shutil.copytree(ROOT / "autograder", package, ignore=ignore)
    for part in ("plugins", "reference", "assignments"):
        shutil.copytree(ROOT / part, package / part, ignore=ignore, dirs_exist_ok=True)
    return package


@pytest.mark.skipif(landlock.abi_version() < 1, reason="Landlock is not available on this kernel")
def test_an_installed_sandbox_reads_its_public_scenarios_and_no_checks(tmp_path):
    site = tmp_path / "lib" / "site-packages"
    package = _install_like_a_wheel(site)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "ngram.py").write_text(PEEKING)
    plugins = package / "plugins"
    refused = [plugins / "ngram" / name for name in ("checks.py", "mistakes.py", "bugs.py", "equivalent_mutants.toml")]
    for other in ("rnn", "transformer"):
        refused += [plugins / other / "checks.py", plugins / other / "public" / "scenarios.py"]
        refused += [package / "assignments" / other / "assignment.toml"]
    public = plugins / "ngram" / "public" / "sampling.py"
    asked = [str(p) for p in [*refused, public]] + ["import lmgrade.plugins.ngram.public.sampling"]
    proc = subprocess.run(
        [sys.executable, "-c", INSTALLED, str(site), str(submission), json.dumps(asked)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["kind"] == "ok", out
    seen = out["value"]
    assert {path: seen[str(path)] for path in refused} == {path: "PermissionError" for path in refused}
    assert seen[str(public)] == "read"
    assert seen["import lmgrade.plugins.ngram.public.sampling"] == "imported"


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/proc"), reason="kills a sandbox uid's processes as root")
def test_every_process_of_a_sandbox_uid_is_killed_without_a_fork():
    """The processes a run leaves under its uid die, in sessions of their own too, and no helper is started."""
    uid = 64999  # no slot's: sandbox uids run from 61000 up
    left = [subprocess.Popen(["/bin/sleep", "300"], user=uid, group=uid, start_new_session=True) for _ in range(3)]
    try:
        assert privileges.kill_user_processes(uid) == 0
        for proc in left:
            assert proc.wait(timeout=5) == -9
    finally:
        for proc in left:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
