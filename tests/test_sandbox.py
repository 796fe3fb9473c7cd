"""Every way a submission can misbehave costs it the case it happens in, nothing more."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_fixtures import parent_of, process_state, run_calls, sandbox_pool, submission_of

from lmgrade.sandbox import landlock
from lmgrade.sandbox.limits import Limits
from lmgrade.sandbox.pool import HarnessError, SandboxPool

ROOT = Path(__file__).resolve().parents[1]
SECRET_FILE = ROOT / "reference" / "ngram" / "ngram.py"

VICTIM = textwrap.dedent("""
    import os, signal, socket, sys, time

    def ok(x):
        return {"x": x, "t": (x, [x]), "inf": float("inf")}

    def busy():
        while True:
            pass

    def sleep():
        time.sleep(1000)

    def kill_self():
        os.kill(os.getpid(), signal.SIGKILL)

    def os_exit():
        os._exit(3)

    def sys_exit():
        sys.exit(2)

    def segfault():
        import ctypes
        return ctypes.string_at(0)

    def memory():
        return len(bytearray(8 * 2**30))

    def read(path):
        return open(path).read(100)

    def connect():
        socket.create_connection(("127.0.0.1", 9), timeout=2)
        return "connected"

    def kill_parent():
        os.kill(os.getppid(), signal.SIGKILL)
        return "killed"

    def fork_bomb():
        children = 0
        for _ in range(200):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
        return children

    def flood():
        while True:
            print("x" * 1000)

    def write_outside(path):
        with open(path, "w") as f:
            f.write("pwned")
        return "written"

    def write_home():
        with open("mine.txt", "w") as f:
            f.write("ok")
        return open("mine.txt").read()

    def environment():
        return sorted(os.environ)

    def daemon():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", "31337"])
            os._exit(0)
        time.sleep(0.3)
        return "spawned"

    def returns_object():
        return object()

    def reference_loaded():
        return [m for m in sys.modules if m == "lmgrade.reference" or m.startswith("lmgrade.reference.")]
""")


@pytest.fixture(scope="module")
def victim(tmp_path_factory):
    return submission_of(tmp_path_factory, "victim", VICTIM)


@pytest.fixture(scope="module")
def pool():
    with sandbox_pool() as p:
        yield p


def run(pool, victim, *cases, **limits):
    return run_calls(pool, victim, cases, Limits(**{"cpu_s": 2, "wall_s": 4, "memory_mb": 512, **limits}))


def test_plain_data_comes_back_with_its_types(pool, victim):
    (out,) = run(pool, victim, ("ok", 3))
    assert out.kind == "ok"
    assert out.value == {"x": 3, "t": (3, [3]), "inf": float("inf")}


@pytest.mark.parametrize(
    "fn,kind,words",
    [
        ("os_exit", "crashed", "exit status 3"),
        ("kill_self", "crashed", "SIGKILL"),
        ("segfault", "crashed", "SIGSEGV"),
        ("busy", "timeout", "CPU time limit"),
        ("flood", "timeout", "time limit"),  # printing is never a fault: only time ends it
    ],
)
def test_a_dying_case_costs_that_case_only_and_a_timeout_the_rest(pool, victim, fn, kind, words):
    # CPU time ends the busy cases at a second; the wall budget leaves room for the next case even on a
    # machine whose cores are busy, where a flood gets a small share of a core (its writes wait on the
    # reader) and a second of CPU takes several.
    cpu_s = 1 if kind == "timeout" else 2
    before, bad, after = run(pool, victim, ("ok", 1), (fn,), ("ok", 2), cpu_s=cpu_s, wall_s=10)
    assert before.kind == "ok" and before.value["x"] == 1
    assert bad.kind == kind and words in bad.message, bad
    if kind == "timeout":
        # Past a time limit the run ends: a function that hangs costs its check one limit, not one per case.
        assert after.kind == "not_run" and after.message == "not run: the check's time limit was used up", after
    else:
        assert after.kind == "ok" and after.value["x"] == 2


def test_a_submission_that_dies_on_import_is_run_once_and_every_case_says_so(pool, tmp_path_factory):
    # Every child would die the same way before its first case: one is enough, and the rest are told why.
    dying = submission_of(tmp_path_factory, "dying", "import os\nos._exit(4)\n")
    children = pool.children
    outcomes = run(pool, dying, ("ok", 1), ("ok", 2), ("ok", 3))
    assert pool.children - children == 1
    assert [o.kind for o in outcomes] == ["crashed"] * 3
    assert all(
        o.message.startswith("while importing the submission, ") and "exit status 4" in o.message for o in outcomes
    )


def test_sys_exit_is_an_error_of_the_case(pool, victim):
    bad, after = run(pool, victim, ("sys_exit",), ("ok", 2))
    assert bad.kind == "error" and bad.error["type"] == "SystemExit"
    assert after.kind == "ok"


def test_memory_blowup_is_a_memory_error(pool, victim):
    bad, after = run(pool, victim, ("memory",), ("ok", 2))
    assert bad.kind == "error" and bad.error["type"] == "MemoryError"
    assert after.kind == "ok"


def test_a_hang_uses_the_wall_budget_and_no_more(pool, victim):
    t0 = time.monotonic()
    outcomes = run(pool, victim, ("sleep",), ("ok", 1), wall_s=1.5)
    assert time.monotonic() - t0 < 1.5 + 1.0
    assert outcomes[0].kind == "timeout" and "wall clock" in outcomes[0].message
    assert outcomes[1].kind == "not_run" and "time limit" in outcomes[1].message


@pytest.mark.skipif(landlock.abi_version() < 1, reason="Landlock is not available on this kernel")
def test_the_reference_cannot_be_read(pool, victim):
    (out,) = run(pool, victim, ("read", str(SECRET_FILE)))
    assert out.kind == "error" and out.error["type"] == "PermissionError"


@pytest.mark.skipif(landlock.abi_version() < 1, reason="Landlock is not available on this kernel")
def test_nothing_outside_the_work_folder_can_be_written(pool, victim, tmp_path):
    target = tmp_path / "escape.txt"
    outside, home = run(pool, victim, ("write_outside", str(target)), ("write_home",))
    assert outside.kind == "error" and not target.exists()
    assert home.kind == "ok" and home.value == "ok"


def test_no_network(pool, victim):
    (out,) = run(pool, victim, ("connect",))
    assert out.kind == "error" and out.error["type"] in ("PermissionError", "OSError", "ConnectionRefusedError")
    assert out.error["type"] != "ConnectionRefusedError" or landlock.abi_version() < 4


@pytest.mark.skipif(
    landlock.abi_version() < 6 and os.geteuid() != 0,
    reason="needs Landlock signal scoping (ABI 6) or a separate sandbox user",
)
def test_the_fork_server_cannot_be_killed(pool, victim):
    killed, after = run(pool, victim, ("kill_parent",), ("ok", 5))
    assert killed.kind == "error" and killed.error["type"] == "PermissionError"
    assert after.kind == "ok"


def test_process_limit(pool, victim):
    (out,) = run(pool, victim, ("fork_bomb",), processes=4)
    assert out.kind == "error" and out.error["type"] == "BlockingIOError"


def _sleepers() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == b"sleep\x0031337\x00":
                    found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not Path("/bin/sleep").exists(), reason="needs /bin/sleep")
def test_daemons_are_killed_with_the_run(pool, victim):
    (out,) = run(pool, victim, ("daemon",))
    assert out.kind == "ok"
    deadline = time.monotonic() + 2
    while _sleepers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers() == []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_supervisor_finds_its_children_from_the_kernels_list_and_by_scanning_alike(monkeypatch):
    """What a run left running is killed by the supervisor's list of its children: the kernel's file per
    thread, or where a kernel has none, a scan of every process."""
    from lmgrade.sandbox import server

    pids = []
    try:
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
        listed = set(server._children())
        real_open = open

        def no_children_file(path, *args, **kwargs):
            if str(path).endswith("/children"):
                raise FileNotFoundError(path)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr("builtins.open", no_children_file)
        scanned = set(server._children())
    finally:
        for pid in pids:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    assert set(pids) <= listed and listed == scanned


def test_the_environment_is_scrubbed(pool, victim, monkeypatch):
    (out,) = run(pool, victim, ("environment",))
    assert out.kind == "ok"
    assert "LMGRADE_SECRET" not in out.value
    assert {"HOME", "TMPDIR"} <= set(out.value)


def test_the_reference_is_not_preloaded(pool, victim):
    (out,) = run(pool, victim, ("reference_loaded",))
    assert out.kind == "ok" and out.value == []


def test_values_that_are_not_plain_data_are_refused(pool, victim):
    (out,) = run(pool, victim, ("returns_object",))
    assert out.kind == "error" and "cannot be graded" in out.error["message"]


def test_preloading_the_reference_is_refused():
    with SandboxPool(
        preload=["lmgrade.reference.ngram"], forbidden_modules=["lmgrade.reference"], protected=[], jobs=1
    ) as p:
        with pytest.raises(Exception, match="must not see"):
            p.run(scenario="x:y", submission=ROOT, files=[], cases=[{}], limits=Limits())


def test_defences_are_reported(pool, victim):
    report = pool.run(
        scenario="sandbox_fixtures.scenarios:call",
        submission=victim,
        files=["victim.py"],
        cases=[{"fn": "ok", "args": [1]}],
        limits=Limits(),
    )
    assert {"cpu", "file size", "open files"} <= set(report.defences["rlimits"])
    if os.path.isdir("/proc"):
        assert {"memory", "processes"} <= set(report.defences["rlimits"])
    if landlock.abi_version() >= 1:
        assert report.defences["landlock"]["abi"] == landlock.abi_version()
    if os.geteuid() == 0:
        assert report.defences["uid"] != 0


PEEKING = textwrap.dedent("""
    def pad(sentence, n):
        seen = []
        for path in sentence:
            try:
                with open(path) as f:
                    f.read(1)
                seen.append("READ " + path)
            except OSError as exc:
                seen.append(type(exc).__name__)
        return seen
""")


@pytest.mark.skipif(landlock.abi_version() < 1, reason="Landlock is not available on this kernel")
def test_a_graded_submission_cannot_read_reference_plugins_or_assignment(ngram_grader, tmp_path):
    (tmp_path / "ngram.py").write_text(PEEKING)
    # The source checkout is not readable at all: its history holds the reference too.
    secrets = [
        ROOT / "reference" / "ngram" / "ngram.py",
        ROOT / "plugins" / "ngram" / "checks.py",
        ROOT / "assignments" / "ngram" / "assignment.toml",
        ROOT / "README.md",
        ROOT / "pyproject.toml",
    ]
    report = ngram_grader.pool.run(
        scenario="lmgrade.plugins.ngram.public.scenarios:pad",
        submission=tmp_path,
        files=["ngram.py"],
        cases=[{"sentence": [str(p) for p in secrets], "n": 1}],
        limits=Limits(),
    )
    (out,) = report.outcomes
    assert out.kind == "ok" and not any(v.startswith("READ") for v in out.value), out.value


def test_readable_except_hides_protected_paths_inside_allowed_trees(tmp_path):
    for name in ("a/secret.json", "a/other.py", "b/c.txt", "top.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    allowed = set(landlock.readable_except([tmp_path], [tmp_path / "a" / "secret.json"]))
    assert allowed == {tmp_path / "a" / "other.py", tmp_path / "b", tmp_path / "top.txt"}


@pytest.mark.parametrize(
    "files,expected",
    [
        ({"cpu.max": "50000 100000\n"}, 0.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.5),
        ({}, None),
    ],
)
def test_available_cpus_follows_the_cgroup_quota(tmp_path, files, expected):
    from lmgrade.sandbox.limits import available_cpus

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    unlimited = float(len(os.sched_getaffinity(0)))
    assert available_cpus(str(tmp_path)) == (min(unlimited, expected) if expected else unlimited)


def test_an_oversized_submission_fails_its_cases_not_the_harness(pool, tmp_path):
    from lmgrade.submissions.submitted_files import MAX_SUBMISSION_BYTES

    (tmp_path / "victim.py").write_text(VICTIM)
    with open(tmp_path / "data.bin", "wb") as f:
        f.truncate(MAX_SUBMISSION_BYTES + 1)
    outcomes = run(pool, tmp_path, ("ok", 1), ("ok", 2))
    assert all(o.kind == "crashed" and "larger than" in o.message for o in outcomes)
    (tmp_path / "data.bin").unlink()
    assert run(pool, tmp_path, ("ok", 3))[0].kind == "ok"  # the same server goes on serving


def test_a_running_child_dies_with_its_fork_server(victim):
    """An interrupted grader leaves nothing behind: the child goes with the server."""
    import threading

    with SandboxPool(
        preload=["numpy", "sandbox_fixtures.scenarios"],
        forbidden_modules=["lmgrade.reference"],
        protected=[ROOT / "reference"],
        jobs=1,
    ) as doomed:
        worker = threading.Thread(
            target=lambda: pytest.raises(HarnessError, run, doomed, victim, ("sleep",), wall_s=30), daemon=True
        )
        worker.start()
        deadline = time.monotonic() + 10
        while not doomed._all and time.monotonic() < deadline:
            time.sleep(0.05)
        server = doomed._all[0].proc
        children = []
        while not children and time.monotonic() < deadline:
            time.sleep(0.05)
            children = [int(p) for p in os.listdir("/proc") if p.isdigit() and parent_of(p) == server.pid]
        assert children, "the child should be running"
        time.sleep(0.3)  # past its lock-down, sleeping in the submission
        server.kill()
        worker.join(10)
        time.sleep(0.3)
        assert all(not Path(f"/proc/{c}").exists() or process_state(c) == "Z" for c in children)


def test_servers_started_before_their_grading_serve_it_and_the_rest_are_closed(victim):
    from lmgrade.sandbox.pool import Prestarted

    root = Path(__file__).resolve().parents[1]
    with Prestarted(["numpy"], jobs=2) as early:
        started = [server.proc for server in early.servers]
        with SandboxPool(
            preload=["numpy", "sandbox_fixtures.scenarios"],
            forbidden_modules=["lmgrade.reference"],
            protected=[root / "reference"],
            jobs=1,
            prestarted=early,
        ) as pool:
            (out,) = run(pool, victim, ("ok", 3))
            assert out.kind == "ok" and out.value["x"] == 3
            # One server was taken and told what it serves; the other still waits.
            assert len(early.servers) == 1 and pool._all[0].proc in started
            # The pool's preload goes on where the early imports left off: the reference stays hidden.
            (secret,) = run(pool, victim, ("read", str(SECRET_FILE)))
            assert secret.kind == "error" and secret.error["type"] == "PermissionError"
    assert all(proc.poll() is not None for proc in started)  # both gone: the one used, the one never taken
