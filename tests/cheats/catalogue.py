"""The catalogue of cheats: submissions that compute nothing real and try to earn points anyway.

Each cheat of an assignment is built from parts kept once here: the filler (`fill.py`, what every answer
is made of, by kind), the assignment's template (`templates/<assignment>/`, one file per file of the
contract, answering every name of the contract with the filler), for `replay_handout` the handout's worked
examples (`replays/<assignment>.py`), and an attack (`attacks/<name>.py`) appended at the end of every
file. The built files need nothing beside them, as the grader copies only the contract's files.

    python tests/cheats/catalogue.py OUT        # every cheat as OUT/<assignment>/<cheat>/, to grade by hand
"""

from __future__ import annotations

import ast
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
LEFT_FILES = ("lmgrade-cheat-", "lmgrade-cheatd-")  # how the files the persistence attacks leave begin


@dataclass(frozen=True)
class Cheat:
    """One cheat: the filler's kind, an attack (a file of attacks/), the handout's answers or not."""

    name: str
    tries: str  # one line: what it tries
    kind: str = "noise"
    attack: str | None = None
    replay: bool = False


CHEATS = (
    Cheat("noise", "values drawn from a hash of the inputs, shaped like the contract's (dependence kept)"),
    Cheat("fixed_noise", "the same non-constant values whatever the inputs", kind="fixed"),
    Cheat("nan", "every number NaN, shapes right", kind="nan"),
    Cheat("inf", "every number infinite with the answer's sign (-inf log-probabilities, inf perplexities)", kind="inf"),
    Cheat("constant", "every number one constant (0 where the range holds it), shapes right", kind="const"),
    Cheat(
        "poison_subclasses", "noise inside list/dict/str/float/ndarray/Tensor subclasses equal to all", kind="poison"
    ),
    Cheat(
        "poison_objects", "an object equal to everything that answers every call, item and conversion", kind="anything"
    ),
    Cheat("replay_handout", "the handout's worked examples returned for any input", replay=True),
    Cheat(
        "patch_comparisons",
        "numpy/math/torch comparisons, isfinite/isnan and warnings patched to agree",
        attack="patch_comparisons",
    ),
    Cheat(
        "patch_builtins",
        "all() True, any() False, operator.eq True, deepcopy and copy the identity",
        attack="patch_builtins",
    ),
    Cheat(
        "patch_lmgrade",
        "the child's lmgrade modules rewritten: the wire encoder claims every outcome",
        attack="patch_lmgrade",
    ),
    Cheat(
        "forge_frames",
        "forged CASE_RESULT and DONE frames on fds 1 to 20, bools claimed True, exit 0",
        attack="forge_frames",
    ),
    Cheat(
        "read_files",
        "walks / and /proc, reads parents' memory, imports the reference; uses what it finds",
        attack="read_files",
    ),
    Cheat(
        "persist_ipc",
        "System V shared memory and a message queue left for, and read by, a later run",
        attack="persist_ipc",
    ),
    Cheat(
        "persist_files",
        "files left in /tmp, /dev/shm, /var/tmp, home and the work folder, read later",
        attack="persist_files",
    ),
    Cheat("daemon", "a double-forked daemon that outlives its run and beats where a later run looks", attack="daemon"),
    Cheat("exit_at_import", "os._exit(0) at import", attack="exit_at_import"),
    Cheat("exit_mid_call", "os._exit(0) in the middle of every third answer", attack="exit_mid_call"),
    Cheat("sys_exit_mid_call", "SystemExit(0) raised from every answer but the first", attack="sys_exit_mid_call"),
    Cheat("kill_parent", "SIGKILL to the fork server, its process group and the grading process", attack="kill_parent"),
)

BY_NAME = {c.name: c for c in CHEATS}


def assignments() -> list[str]:
    """The assignments the catalogue covers: those with a template."""
    return sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir())


def files_of(assignment: str) -> list[str]:
    """The contract's files of `assignment`, as its template holds them."""
    return sorted(p.name for p in (TEMPLATES / assignment).glob("*.py"))


def cheats_of(assignment: str) -> list[Cheat]:
    """The cheats of `assignment`: all of them but replay_handout where its handout has no worked example."""
    return [c for c in CHEATS if not c.replay or (HERE / "replays" / f"{assignment}.py").exists()]


def ipc_keys(assignment: str) -> tuple[int, int, int]:
    """The System V keys an assignment's cheats use: shared memory, message queue, the daemon's beat."""
    base = 0x4C470000 + zlib.crc32(assignment.encode()) % 0xFFFF
    return base, base + 0x10000, base + 0x20000


def daemon_name(assignment: str) -> str:
    """The process name of the daemon attack's daemon (15 characters at most, as Linux keeps them)."""
    return f"cheatd-{assignment}"[:15]


def _without_own_imports(text: str) -> str:
    """`text` without its imports of the filler and of __future__ (the built file has them once, inline)."""
    lines = text.splitlines(keepends=True)
    for node in sorted(ast.parse(text).body, key=lambda n: -n.lineno):
        if isinstance(node, ast.ImportFrom) and node.module in ("fill", "__future__"):
            del lines[node.lineno - 1 : node.end_lineno]
    return "".join(lines)


def _filler(kind: str, assignment: str, filename: str) -> str:
    settings = {"KIND": kind, "ASSIGNMENT": assignment, "FILE": filename}
    text = (HERE / "fill.py").read_text()
    for name, value in settings.items():
        text = re.sub(rf"^{name} = .*$", f"{name} = {value!r}", text, count=1, flags=re.M)
    text = re.sub(r"^DAEMON = .*$", f"DAEMON = {daemon_name(assignment)!r}", text, count=1, flags=re.M)
    return re.sub(r"^IPC_KEYS = .*$", f"IPC_KEYS = {ipc_keys(assignment)!r}", text, count=1, flags=re.M)


def source(assignment: str, cheat: Cheat, filename: str) -> str:
    """The text of one file of a cheat."""
    parts = [_filler(cheat.kind, assignment, filename), (TEMPLATES / assignment / filename).read_text()]
    if cheat.replay:
        parts.append((HERE / "replays" / f"{assignment}.py").read_text())
    parts.append("_wrap_module(globals())\n")
    if cheat.attack:
        parts.append((HERE / "attacks" / f"{cheat.attack}.py").read_text())
    body = "\n\n".join(_without_own_imports(p) for p in parts)
    return f'"""Cheat {cheat.name} of {assignment}: {cheat.tries}."""\n\nfrom __future__ import annotations\n\n{body}'


def write_cheat(assignment: str, name: str, folder: Path) -> Path:
    """The cheat `name` of `assignment` as a submission folder: the contract's files, nothing else."""
    cheat = BY_NAME[name]
    folder.mkdir(parents=True, exist_ok=True)
    for filename in files_of(assignment):
        (folder / filename).write_text(source(assignment, cheat, filename))
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/cheats/catalogue.py OUT")
    for assignment in assignments():
        for cheat in cheats_of(assignment):
            print(write_cheat(assignment, cheat.name, Path(sys.argv[1]) / assignment / cheat.name))
