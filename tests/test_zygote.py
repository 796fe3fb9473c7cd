"""Fork servers forked from a warm zygote: the same server a fresh start gives, asked for by the grader alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_fixtures import parent_of, process_state, sandbox_pool, submission_of

from lmgrade.sandbox import zygote
from lmgrade.sandbox.limits import Limits
from lmgrade.sandbox.pool import _Server, _server_env

pytestmark = pytest.mark.skipif(not zygote.enabled(), reason="zygotes need Linux (pidfds, descriptor passing)")

PROBE = textwrap.dedent("""
    import array, os, socket

    def read(path):
        return open(path, "rb").read().hex()

    def ask(path):
        # The request a grader sends, with a token guessed and descriptors of its own.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(5)
            conn.connect(path)
            fds = array.array("i", [0, 1, 2, 0])
            conn.sendmsg([bytes(32) + b'{"cwd": "/"}'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            conn.shutdown(socket.SHUT_WR)
            return conn.recv(4096).decode()
""")


@pytest.fixture
def own_zygotes(monkeypatch):
    """A folder of zygotes for this test alone, whose zygotes leave soon after it."""
    top = Path(tempfile.mkdtemp(prefix="lmgrade-test-"))
    folder = top / "zygotes"
    monkeypatch.setenv(zygote.DIR_ENV, str(folder))
    monkeypatch.setenv(zygote.IDLE_ENV, "3")
    monkeypatch.delenv(zygote.ENABLE_ENV, raising=False)
    yield folder
    shutil.rmtree(top, ignore_errors=True)


def _cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode()


def _start_server(warm=("numpy",)) -> _Server:
    return _Server(_server_env(), list(warm))


def _seeded(folder: Path, warm=("numpy",)) -> str:
    """Start a server afresh where no zygote runs, and wait for the zygote it forks; its name."""
    first = _start_server(warm)
    try:
        assert not first.forked_by_zygote and parent_of(first.proc.pid) == os.getpid()
        deadline = time.monotonic() + 60
        while not list(folder.glob("*.token")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (token,) = folder.glob("*.token")
        assert zygote._answers(token.with_suffix(".sock")), "the first server seeded no zygote"
    finally:
        first.close()
    return token.stem


def test_servers_come_from_one_zygote_seeded_by_the_first_started_afresh(own_zygotes):
    _seeded(own_zygotes)
    first, second = _start_server(), _start_server()
    try:
        assert first.forked_by_zygote and second.forked_by_zygote
        parent = parent_of(first.proc.pid)
        assert parent == parent_of(second.proc.pid) != os.getpid()
        # The zygote is a copy of a fork server started afresh, its imports done, in a session of its own.
        assert "lmgrade.sandbox.server" in _cmdline(parent) and "numpy" in _cmdline(parent)
        assert os.getsid(parent) != os.getsid(0)
        # It holds none of the first grading's descriptors: no pipe of ours, no slot's lease.
        held = {os.readlink(f"/proc/{parent}/fd/{fd}") for fd in os.listdir(f"/proc/{parent}/fd")}
        assert not any("slot-" in h for h in held) and not any(h.startswith("pipe:") for h in held)
        # Another list of libraries is another zygote, not yet seeded.
        third = _start_server(["json"])
        assert not third.forked_by_zygote
        third.close()
    finally:
        first.close()
        second.close()


def test_a_server_forked_by_the_zygote_grades_as_a_fresh_one(tmp_path, monkeypatch, tmp_path_factory):
    # A folder deeper than a socket's address may be: reached through a descriptor of it.
    deep = tmp_path / ("d" * 100) / "zygotes"
    monkeypatch.setenv(zygote.DIR_ENV, str(deep))
    monkeypatch.setenv(zygote.IDLE_ENV, "3")
    monkeypatch.delenv(zygote.ENABLE_ENV, raising=False)
    _seeded(deep)
    victim = submission_of(tmp_path_factory, "victim", "def ok(x):\n    return {'x': x}\n")
    with sandbox_pool(warm=["numpy"]) as pool:
        report = pool.run(
            scenario="sandbox_fixtures.scenarios:call",
            submission=victim,
            files=["victim.py"],
            cases=[{"fn": "ok", "args": [4]}],
            limits=Limits(cpu_s=5, wall_s=10),
        )
        assert pool._all[0].forked_by_zygote
    (out,) = report.outcomes
    assert out.kind == "ok" and out.value == {"x": 4}
    assert report.defences["no_new_privileges"] is True


def test_off_starts_every_server_afresh_and_seeds_no_zygote(own_zygotes, monkeypatch):
    monkeypatch.setenv(zygote.ENABLE_ENV, "off")
    for _ in range(2):
        server = _start_server()
        try:
            assert not server.forked_by_zygote and parent_of(server.proc.pid) == os.getpid()
        finally:
            server.close()
    assert not own_zygotes.exists() or not list(own_zygotes.glob("*.sock"))


def test_the_zygote_forks_for_no_one_without_its_token(own_zygotes):
    name = _seeded(own_zygotes)
    with pytest.raises(zygote.ZygoteError, match="a wrong token"):
        zygote._ask(own_zygotes / name, (0, 1, 2, 0), token=bytes(zygote.TOKEN_BYTES))


def test_the_zygote_forks_for_no_sandboxed_process_even_with_its_token(own_zygotes):
    """no_new_privs, which every child sets and never loses, marks a process the zygote refuses."""
    name = _seeded(own_zygotes)
    asker = textwrap.dedent(f"""
        import ctypes, sys
        from pathlib import Path
        from lmgrade.sandbox import privileges, zygote
        assert privileges.forbid_new_privileges()
        try:
            zygote._ask(Path({str(own_zygotes / name)!r}), (0, 1, 2, 0))
        except zygote.ZygoteError as exc:
            print(exc)
    """)
    said = subprocess.run([sys.executable, "-c", asker], capture_output=True, text=True, timeout=60)
    assert "a sandboxed process" in said.stdout, said.stderr


def test_a_child_can_neither_read_the_token_nor_be_answered(own_zygotes, tmp_path_factory):
    name = _seeded(own_zygotes)
    victim = submission_of(tmp_path_factory, "probe", PROBE)
    with sandbox_pool() as pool:
        report = pool.run(
            scenario="sandbox_fixtures.scenarios:call",
            submission=victim,
            files=["victim.py"],
            cases=[
                {"fn": "read", "args": [str(own_zygotes / f"{name}.token")]},
                {"fn": "ask", "args": [str(own_zygotes / f"{name}.sock")]},
            ],
            limits=Limits(cpu_s=5, wall_s=10),
        )
    token, ask = report.outcomes
    assert token.kind == "error" and token.error["type"] == "PermissionError"
    # Refused by the kernel (another uid, the folder's mode) or by the zygote: never a pid.
    assert (ask.kind == "error" and ask.error["type"] == "PermissionError") or (
        ask.kind == "ok" and "refused" in ask.value and "pid" not in ask.value
    ), ask


def test_an_idle_zygote_leaves(own_zygotes):
    _seeded(own_zygotes)
    server = _start_server()
    zygote_pid = parent_of(server.proc.pid)
    server.close()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{zygote_pid}").exists() and process_state(zygote_pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not list(own_zygotes.glob("*.sock"))
    assert not Path(f"/proc/{zygote_pid}").exists() or process_state(zygote_pid) == "Z"


def test_a_zygote_serves_one_environment_and_one_list_of_libraries():
    env = _server_env()
    assert zygote.key(env, ["numpy"]) == zygote.key(dict(env), ["numpy"])
    assert zygote.key(env, ["numpy"]) != zygote.key({**env, "LANG": "xx"}, ["numpy"])
    assert zygote.key(env, ["numpy"]) != zygote.key(env, ["numpy", "json"])
