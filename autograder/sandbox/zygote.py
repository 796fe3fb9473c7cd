"""A warm interpreter kept between gradings: fork servers are forked from it instead of started.

Starting a fork server means starting Python and importing what the
assignment needs: torch and its compiler take about 4 s of a core, paid by
every grading, `check` after `check`. A zygote pays that once. The first
fork server started afresh on a machine, its imports done and before it
reads anything of its grading, forks a copy of itself that closes every
descriptor it had (the grading's pipes, its slot's lease) and waits on a unix
socket in a folder private to this user: the zygote. A later grading that
needs a fork server connects and hands over the descriptors the server talks
through (its input, its output, its error stream, the lease of its sandbox
slot); the zygote forks, and the copy goes on as a fork server started
afresh would (`server.main`). The first grading pays nothing for it but a
fork.

What it holds is the libraries, and nothing of any grading: it reads no
request but "fork", never a submission, an answer or a result. So a fork
server forked from it starts from the state a fresh one reaches, and all that
`server.py` says of what a child can see holds as before.

Who may ask: a process of this user that is not sandboxed and holds the
token in the zygote's folder. A sandboxed child fails all three: as root its
uid is another; the kernel never clears its no_new_privs (`child._lock_down`);
Landlock or the folder's mode keeps it from the token, and the zygote keeps
only the token's hash, so a fork server's memory holds no token either.

One zygote per interpreter, harness source, environment and library list: a
changed file or package starts a fresh one. It leaves after
LMGRADE_ZYGOTE_IDLE seconds without a request (300 by default);
LMGRADE_ZYGOTE=off starts every fork server afresh, and seeds none.
"""

from __future__ import annotations

import array
import contextlib
import gc
import hashlib
import hmac
import importlib
import importlib.util
import json
import os
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENABLE_ENV, IDLE_ENV, DIR_ENV = "LMGRADE_ZYGOTE", "LMGRADE_ZYGOTE_IDLE", "LMGRADE_ZYGOTE_DIR"
SEED_ARG, IDLE_ARG = "--zygote=", "--zygote-idle="
DEFAULT_IDLE_S = 300.0
TOKEN_BYTES = 32
N_FDS = 4  # the fork server's input, output and error stream, and its slot's lease
MAX_REQUEST = 64 * 1024
HARNESS = Path(__file__).resolve().parents[1]


class ZygoteError(RuntimeError):
    """No fork server came from a zygote: the caller starts one afresh."""


def enabled() -> bool:
    """Whether fork servers may come from a zygote: asked for, and Linux (pidfds, descriptor passing)."""
    return (
        os.environ.get(ENABLE_ENV, "on").lower() not in ("off", "0", "no", "false")
        and hasattr(os, "pidfd_open")
        and hasattr(socket, "SCM_RIGHTS")
        and hasattr(signal, "pidfd_send_signal")
    )


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get(IDLE_ENV, DEFAULT_IDLE_S)))
    except ValueError:
        return DEFAULT_IDLE_S


def folder() -> Path:
    """One folder per user of the machine, private to that user (as the leases' folder is)."""
    default = Path(tempfile.gettempdir()) / f"lmgrade-zygotes-{os.geteuid()}"
    path = Path(os.environ.get(DIR_ENV) or default)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise ZygoteError(f"{path} is not a private folder of this user; remove it or set {DIR_ENV}")
    return path


def key(env: dict, warm: list[str]) -> str:
    """What a zygote is for: a fork server it forks must be the one a fresh start would give."""
    sources = sorted(_stamp(p) for p in HARNESS.rglob("*.py"))
    libraries = []
    for module in warm:
        spec = importlib.util.find_spec(module.partition(".")[0])
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        libraries.append((module, str(origin), origin.stat().st_mtime_ns if origin and origin.exists() else None))
    what = [sys.executable, sys.version, sorted(env.items()), libraries, sources]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:24]


def _stamp(path: Path) -> tuple:
    """A source file's name, time and size; one removed since it was listed counts as absent."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return (str(path.relative_to(HARNESS)), None, None)
    return (str(path.relative_to(HARNESS)), info.st_mtime_ns, info.st_size)


# --- the grading process's side ---------------------------------------------------------------------------


class ForkedServer:
    """A fork server the zygote forked, as `subprocess.Popen` gives one started afresh (pid, stdin,
    stdout, poll, wait, kill), through a pidfd: it is the zygote's child, not ours."""

    def __init__(self, pid: int, stdin_fd: int, stdout_fd: int):
        self.pid = pid
        self._pidfd = os.pidfd_open(pid)
        self.stdin = os.fdopen(stdin_fd, "wb")
        self.stdout = os.fdopen(stdout_fd, "rb")

    def poll(self) -> int | None:
        """None while it runs; its exit status is not ours to read, so an ended one gives -1."""
        if self._pidfd < 0 or select.select([self._pidfd], [], [], 0)[0]:
            return -1
        return None

    def wait(self, timeout: float | None = None) -> int:
        if self._pidfd >= 0 and not select.select([self._pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(f"fork server {self.pid}", timeout)
        self._close_pidfd()
        return -1

    def kill(self) -> None:
        if self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _close_pidfd(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


def place(env: dict, warm: list[str]) -> Path | None:
    """Where the zygote for `env` and `warm` lives (its socket, token and lock are this path with a suffix),
    or None where there is none to have: zygotes off, no pidfds, no private folder."""
    if not enabled():
        return None
    try:
        return folder() / key(env, warm)
    except (OSError, ZygoteError):
        return None


def seed_arguments(where: Path) -> list[str]:
    """What a fork server started afresh is told so that, once it has imported its libraries, it forks the
    zygote `where` for the next gradings (`seed`)."""
    return [f"{SEED_ARG}{where}", f"{IDLE_ARG}{idle_seconds():g}"]


def fork_server(where: Path, lease_fd: int) -> ForkedServer | None:
    """A fork server forked by the zygote `where`, holding the lease `lease_fd`; None where none answers
    (not yet, or not any more): the caller starts one afresh, which seeds it."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        pid = _ask(where, (in_r, out_w, 2, lease_fd))
        return ForkedServer(pid, in_w, out_r)
    except (OSError, ZygoteError):
        for fd in (in_w, out_r):
            os.close(fd)
        return None
    finally:
        os.close(in_r)
        os.close(out_w)


@contextlib.contextmanager
def _address(path: Path):
    """`path` as a socket address: a unix socket's is at most 107 bytes, so a longer one (a deep TMPDIR)
    is reached through a descriptor of its folder."""
    if len(os.fsencode(str(path))) < 100:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def _ask(where: Path, fds: tuple[int, ...], token: bytes | None = None) -> int:
    token = where.with_suffix(".token").read_bytes() if token is None else token
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn, _address(where.with_suffix(".sock")) as address:
        conn.settimeout(30)
        conn.connect(address)
        request = token + json.dumps({"cwd": os.getcwd()}).encode()
        conn.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(4096):
            reply += chunk
    try:
        answer = json.loads(reply)
        return int(answer["pid"])
    except (ValueError, KeyError, TypeError):
        raise ZygoteError(f"the zygote forked no server: {reply[:200]!r}") from None


@contextlib.contextmanager
def _locked(path: Path):
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# --- the zygote ---------------------------------------------------------------------------------------------


def seed(arguments: list[str], warm: list[str], serve: Callable[[], None]) -> None:
    """In a fork server started afresh, its imports done and nothing of a grading read yet: fork the zygote
    `arguments` name (`seed_arguments`), unless one already answers there. The copy keeps nothing of the
    server's: every descriptor (the grading's pipes, the slot's lease) is closed in it. `serve` is what each
    fork of the zygote goes on to run (`server.serve`), handed over so that this module need not import it."""
    options = {a.split("=", 1)[0] + "=": a.split("=", 1)[1] for a in arguments}
    where, idle_s = Path(options[SEED_ARG]), float(options.get(IDLE_ARG, DEFAULT_IDLE_S))
    if _answers(where.with_suffix(".sock")):
        return
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)  # the first copy leaves at once; the zygote is no child of ours
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        os.closerange(0, _max_fd())
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.chdir("/")
        _zygote(where, warm, idle_s, serve)
    finally:
        os._exit(0)


def _max_fd() -> int:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if 0 < soft < 1 << 20 else 1 << 16


def _answers(path: Path) -> bool:
    """Whether a zygote listens at `path` now."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn, _address(path) as address:
            conn.settimeout(2)
            conn.connect(address)
        return True
    except OSError:
        return False


def _zygote(where: Path, warm: list[str], idle_s: float, serve: Callable[[], None]) -> None:
    """The zygote's life: listen, publish its socket and token (one zygote wins a race), fork until idle."""
    from . import privileges, reads

    privileges.ipc_namespaces_work()  # the same for every fork server of ours: tried once, here
    # What the libraries installed, for the children's reads: the same for every fork server, read once here
    # (torch's RECORD alone is some ten thousand lines); a fork server works out the rest of its allow-list.
    with contextlib.suppress(Exception):
        reads.library_paths(warm, leave_out=[reads.HARNESS_PACKAGE])
    sock = where.with_suffix(".sock")
    token = bytearray(TOKEN_BYTES)
    with open("/dev/urandom", "rb", buffering=0) as random:
        random.readinto(token)
    token_hash = hashlib.sha256(token).digest()
    with _locked(where.with_suffix(".lock")):
        if _answers(sock):  # another zygote published itself meanwhile
            return
        listener = _listen(sock)
        staged = where.with_name(f"{where.name}.token.{os.getpid()}")
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, token)
        finally:
            os.close(fd)
        os.replace(staged, where.with_suffix(".token"))
    token[:] = bytes(TOKEN_BYTES)  # only its hash stays, in us and in every fork of ours
    # The libraries' objects, out of the collector's way for good: a fork server collects before it freezes
    # what its children start from, and would go through every one of torch's objects again (0.2 s).
    gc.collect()
    gc.freeze()
    _serve(listener, sock, token_hash, warm, idle_s, serve)


def _listen(path: Path) -> socket.socket:
    staged = path.with_name(f"{path.name}.{os.getpid()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        with _address(staged) as address:
            listener.bind(address)
    finally:
        os.umask(old)
    listener.listen(64)
    os.replace(staged, path)  # over a dead zygote's socket, at once for every client
    return listener


def _serve(
    listener: socket.socket, path: Path, token_hash: bytes, warm: list[str], idle_s: float, serve: Callable[[], None]
) -> None:
    from .privileges import reap_ended

    mine = os.stat(path).st_ino
    last = time.monotonic()
    own_nnp = _no_new_privs("self")
    while True:
        readable = select.select([listener], [], [], 1.0)[0]
        reap_ended()
        if not readable:
            try:
                replaced = os.stat(path).st_ino != mine
            except FileNotFoundError:
                replaced = True
            if replaced:
                return
            if time.monotonic() - last > idle_s:
                with contextlib.suppress(OSError):
                    if os.stat(path).st_ino == mine:
                        os.unlink(path)
                return
            continue
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        last = time.monotonic()
        with conn:
            _answer(conn, listener, token_hash, warm, own_nnp, serve)


def _answer(
    conn: socket.socket,
    listener: socket.socket,
    token_hash: bytes,
    warm: list[str],
    own_nnp: bool,
    serve: Callable[[], None],
):
    conn.settimeout(10)
    fds: list[int] = []
    try:
        pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        buf = bytearray(MAX_REQUEST)
        n, ancillary, _, _ = conn.recvmsg_into([buf], socket.CMSG_SPACE(N_FDS * 4))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", data[: len(data) - len(data) % 4]))
        while n < MAX_REQUEST and (more := conn.recv_into(memoryview(buf)[n:])):
            n += more
        token_ok = hmac.compare_digest(hashlib.sha256(memoryview(buf)[:TOKEN_BYTES]).digest(), token_hash)
        buf[:TOKEN_BYTES] = bytes(TOKEN_BYTES)  # no copy of the token is left for a fork to find
        refused = (
            "another user"
            if uid != os.geteuid()
            else "a sandboxed process"
            if not own_nnp and _no_new_privs(str(pid)) is not False
            else "a wrong token"
            if not token_ok
            else f"{len(fds)} descriptors, not {N_FDS}"
            if len(fds) != N_FDS
            else None
        )
        if refused:
            conn.sendall(json.dumps({"refused": refused}).encode())
            return
        cwd = json.loads(bytes(buf[TOKEN_BYTES:n]))["cwd"]
        child = os.fork()
        if child == 0:
            listener.close()
            conn.close()
            _become_server(fds, cwd, warm, serve)
        conn.sendall(json.dumps({"pid": child}).encode())
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _become_server(fds: list[int], cwd: str, warm: list[str], serve: Callable[[], None]) -> None:
    """In the fork: take the grading's descriptors as our own and go on as `server.serve` does."""
    code = 70
    try:
        os.setsid()
        stdin, stdout, stderr, _lease = fds  # the lease stays open, at whatever number, while we live
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        for fd in (stdin, stdout, stderr):
            if fd > 2:
                os.close(fd)
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        sys.argv = ["-c", *warm]
        serve()  # exits
    finally:
        os._exit(code)


def _no_new_privs(pid: str) -> bool | None:
    """Whether process `pid` runs with no_new_privs (None: not known, as for a process gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NoNewPrivs:"):
                    return line.split()[1] == "1"
    except OSError:
        return None
    return None
