"""Look everywhere for the reference, the expected values, the fixtures and the secret, and use what is found.

Walks / (for at most a second and a half), reads /proc (other processes' environment, command line and
memory, the parent's first), tries to import the reference and the graders' modules by their package
names, and searches sys.modules and the garbage collector for anything the fork server left in memory.
Every success is printed as a CHEAT-FOUND line. A reference module found (imported or loaded from a
file of the contract's name under a folder named reference) replaces this file's answers with its own.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import time

from fill import ASSIGNMENT, FILE, _found, _once, _tried

_WORDS = ("reference", "expected", "fixtures", "secret")
# Folders a sandboxed child may read by design: the Python installation, the system's libraries and data,
# and the harness's own package (its code is public: a student bundle ships it).
_HARNESS = os.path.dirname(getattr(sys.modules.get("lmgrade"), "__file__", None) or "/nonexistent/")
_SYSTEM = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", sys.prefix, sys.base_prefix, _HARNESS + os.sep)


def _readable(path):
    try:
        with open(path, "rb") as f:
            return f.read(256)
    except OSError:
        return None


def _near_the_harness():
    """Folders around the harness's own code (a checkout or an installation holds the reference beside it)."""
    roots = []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if name.startswith("lmgrade") and where:
            roots.append(os.path.dirname(os.path.dirname(os.path.abspath(where))))
    return list(dict.fromkeys(roots))


def _walk(deadline):
    """Files named like what the child must not see, outside the readable system folders: first around the
    harness's code, Gradescope's /autograder and the homes, then everywhere."""
    hits = []
    for top in [*_near_the_harness(), "/autograder", "/home", "/root", "/"]:
        hits += _walk_from(top, deadline)
    return list(dict.fromkeys(hits))


def _walk_from(top, deadline):
    hits = []
    for root, dirs, files in os.walk(top, topdown=True):
        if time.monotonic() > deadline:
            break
        dirs[:] = [
            d
            for d in dirs
            if os.path.join(root, d) not in ("/proc", "/sys", "/dev") and not os.path.join(root, d).startswith(_SYSTEM)
        ]
        for name in files:
            path = os.path.join(root, name)
            if any(w in path.lower() for w in _WORDS) and not path.startswith(_SYSTEM):
                if _readable(path) is not None:
                    hits.append(path)
    return hits


def _proc():
    """What /proc gives of other processes: their environment (the secret), command line and memory."""
    try:
        others = sorted(p for p in os.listdir("/proc") if p.isdigit())
    except OSError as exc:
        others = []
        _tried(f"listing /proc: {type(exc).__name__}")
    for pid in [os.getppid(), *others][:400]:
        if str(pid) == str(os.getpid()):
            continue
        environ = _readable(f"/proc/{pid}/environ")
        if environ and b"LMGRADE" in environ:
            _found(f"read the environment of process {pid}: {environ[:80]!r}")
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
                start = int(maps.readline().split("-")[0], 16)
                mem.seek(start)
                if mem.read(64):
                    _found(f"read the memory of process {pid}")
        except (OSError, ValueError):
            pass


def _imported_reference():
    stem = FILE[:-3]
    for name in (f"lmgrade.reference.{ASSIGNMENT}.{stem}", f"reference.{ASSIGNMENT}.{stem}"):
        try:
            module = importlib.import_module(name)
        except BaseException as exc:
            _tried(f"importing {name}: {type(exc).__name__}")
            continue
        _found(f"imported {name}")
        return module
    for name in (f"lmgrade.plugins.{ASSIGNMENT}.checks", f"lmgrade.plugins.{ASSIGNMENT}.mistakes"):
        try:
            importlib.import_module(name)
            _found(f"imported {name}")
        except BaseException:
            pass
    return None


def _loaded_reference(paths):
    beside = [os.path.join(root, "reference", ASSIGNMENT, FILE) for root in _near_the_harness()]
    for path in [*beside, *paths]:
        if os.path.basename(path) == FILE and "reference" in path.lower():
            try:
                spec = importlib.util.spec_from_file_location(f"_found_{FILE[:-3]}", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            except BaseException:
                continue
            _found(f"loaded the reference from {path}")
            return module
    return None


def _in_memory():
    for name in list(sys.modules):
        graders = name.startswith("lmgrade.plugins.") and name.endswith((".checks", ".mistakes", ".bugs"))
        if graders or name.startswith(("lmgrade.reference", "reference")):
            _found(f"module {name} is in memory")
    for obj in gc.get_objects():
        if isinstance(obj, dict) and "LMGRADE_SECRET" in obj:
            _found("a dict holding LMGRADE_SECRET is in memory")
            break


def _look():
    """Every place looked into once a process; the paths found kept for each file of the cheat."""
    if _once("read_files"):
        if "LMGRADE_SECRET" in os.environ:
            _found("LMGRADE_SECRET is in the environment")
        sys._cheat_paths = _walk(time.monotonic() + 1.0)
        _tried(f"walked / outside the system folders: {len(sys._cheat_paths)} readable files named like a secret")
        for path in sys._cheat_paths[:20]:
            _found(f"read {path}")
        _proc()
        _in_memory()
    return _imported_reference() or _loaded_reference(getattr(sys, "_cheat_paths", []))


if _once(f"read_files {FILE}"):
    _reference = _look()
    if _reference is not None:  # its answers replace ours
        globals().update({k: v for k, v in vars(_reference).items() if not k.startswith("__")})
