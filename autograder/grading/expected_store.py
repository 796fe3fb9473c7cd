"""Expected values kept on disk, addressed by what computed them.

The reference's answers to a check's cases depend on the reference's files,
the graders' code, the harness, the numeric libraries, the variant and the
cases' arguments, and on nothing else: a key made of exactly those finds a
second grading's expected values on disk instead of recomputing them (a
regrade after a fix to one check recomputes that check only). Nothing is
keyed by the course secret: the cases' arguments are, so a changed secret
or a changed check simply misses.

The store lives in the user's cache folder (``LMGRADE_CACHE`` names another,
``LMGRADE_CACHE=off`` turns it off), readable by its owner only and never by
the sandbox (it holds hidden checks' answers). Entries are `wire` data,
written to a temporary file and renamed, so two gradings sharing the store
at once never read half an entry; a damaged entry is a miss.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..boundary import wire
from ..declare.checks import Case, Check

OFF = "off"


def default_folder() -> Path | None:
    """Where the store lives: LMGRADE_CACHE, else the user's cache folder; None when turned off."""
    chosen = os.environ.get("LMGRADE_CACHE")
    if chosen == OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lmgrade" / "expected"


# lmgrade's subpackages that hold the assignments: folders of their own in a source checkout
# (pyproject.toml's package-dir), inside lmgrade/ once installed. The harness's digest leaves them out
# in both, so that a zip built from a checkout and graded from its wheel finds the values it recorded;
# the checks' packages and the reference's files have digests of their own.
ASSIGNMENT_SUBPACKAGES = ("plugins", "reference", "assignments")


@cache
def _tree_digest(folder: Path, leave_out: tuple[str, ...] = ()) -> str:
    """SHA-256 of the names and bytes of the Python files under `folder` (but its sub-folders `leave_out`)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts or path.relative_to(folder).parts[0] in leave_out:
            continue
        relative = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        digest.update(f"{len(relative)}:{relative}:{len(data)}:".encode() + data)
    return digest.hexdigest()


@cache
def _version(name: str) -> str:
    """The installed version of the library imported as `name`, "-" where there is none: read from its
    metadata, not imported (a grading that computes nothing never imports torch)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:  # imported under another name than its distribution's
        for distribution in importlib.metadata.packages_distributions().get(name, []):
            return importlib.metadata.version(distribution)
    return "-"


def code_digest(reference: Path, files: tuple[str, ...], code_packages: list[str], libraries: list[str]) -> str:
    """What the expected values' code is made of: the reference's files, the graders' and harness's code
    (`code_packages`: packages, or modules outside any package, by their import names), and the
    versions of the libraries that compute them (`libraries`: what the fork servers import first, numpy
    and assignment.toml's preload).

    Packages are named by their import names, never by their folders: a zip built from a source
    checkout (folders autograder/, plugins/) is graded from an installed wheel (lmgrade/), and the
    same code must give the same keys there. A library the assignment does not use is not named: the
    zip of an assignment without torch is graded where torch is not installed.
    """
    digest = hashlib.sha256(f"lmgrade {__version__}\0".encode())
    # numpy by its major version, as a Gradescope image may hold another minor one: within one, answers
    # differ by rounding, as they do between two processors, and every check compares within its
    # tolerance. Any other (torch) by its full version: a zip pins the one it was built with.
    for name in sorted({library.partition(".")[0] for library in libraries}):
        parts = 1 if name == "numpy" else 3
        version = _version(name)
        digest.update(f"{name} {'.'.join(version.split('+')[0].split('.')[:parts])}\0".encode())
    for filename in files:
        data = (reference / filename).read_bytes()
        digest.update(f"{len(filename)}:{filename}:{len(data)}:".encode() + data)
    for name in sorted({__name__.partition(".")[0], *code_packages}):
        module = sys.modules[name]
        path = Path(module.__file__).resolve()
        # A package by every file under it; a module outside any package by its own file.
        if not hasattr(module, "__path__"):
            code = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            code = _tree_digest(path.parent, ASSIGNMENT_SUBPACKAGES if name == __name__.partition(".")[0] else ())
        digest.update(f"{name}:{code}\0".encode())
    return digest.hexdigest()


def entry_key(code: str, check: Check, variant: dict, cases: list[Case], what: str = "expected") -> str:
    """The key of one check's expected values (or of what a mistake answers, `what`) on `cases`."""
    digest = hashlib.sha256(f"{code}\0{what}\0{check.name}\0{check.device}\0".encode())
    digest.update(json.dumps(variant, sort_keys=True, default=str).encode())
    digest.update(wire.encode([[c.label, c.args] for c in cases]))
    return digest.hexdigest()


class ExpectedStore:
    """A folder of wire-encoded entries, one file per key."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.wire"

    def get(self, key: str) -> Any | None:
        """The entry stored under `key`, or None (never stored, or unreadable)."""
        try:
            return wire.decode(self._path(key).read_bytes())
        except (OSError, wire.WireError):
            return None

    def put(self, key: str, value: Any) -> None:
        """Store `value` under `key`; a store that cannot be written is left alone (grading goes on)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.folder, 0o700)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(wire.encode(value))
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except (OSError, wire.WireError):
            pass


class RecordingStore(ExpectedStore):
    """A store that records into its own folder every entry it is asked for, sharing them with `source`
    (the user's store).

    What a zip records: an entry the user's store already holds (the same key is the same code, cases
    and seed) is copied from there; one computed is kept in both, so that grading with the course's
    secret after building the zip computes nothing again.
    """

    def __init__(self, folder: Path, source: ExpectedStore | None):
        super().__init__(folder)
        self.source = source

    def get(self, key: str) -> Any | None:
        found = super().get(key)
        if found is None and self.source is not None:
            found = self.source.get(key)
            if found is not None:
                super().put(key, found)
        return found

    def put(self, key: str, value: Any) -> None:
        super().put(key, value)
        if self.source is not None:
            self.source.put(key, value)


def default_store() -> ExpectedStore | None:
    """The store `grade`, `check` and `regrade` keep (see `default_folder`)."""
    folder = default_folder()
    return ExpectedStore(folder) if folder is not None else None
