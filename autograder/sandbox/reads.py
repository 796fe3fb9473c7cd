"""What a sandboxed child may read: the allow-list its Landlock rules grant.

Exactly: the interpreter and its standard library, the system's shared
libraries and settings, the installed libraries the assignment needs (the
distributions of the modules the fork server preloads, numpy and torch, with
every distribution they require), the harness's own modules (which a scenario
imports), and the assignment's public scenarios. Every site-packages folder
is left out whole and granted back library by library: an installed lmgrade
(the Gradescope zip's wheel) holds every assignment's checks, known mistakes
and bugs, and other packages hold other assignments. Whatever is `protected`
(the plugins of every assignment, the references, the expected values, the
results) stays out wherever it lies.
"""

from __future__ import annotations

import functools
import glob
import importlib.metadata as metadata
import os
import re
import site
import sys
from collections.abc import Iterable
from pathlib import Path

from .landlock import readable_except

# Shared libraries, programs the standard library runs, the system's settings, and the devices a
# child reads random numbers from.
SYSTEM = ("/usr", "/lib", "/lib64", "/bin", "/etc", "/dev/urandom", "/dev/random", "/dev/zero")
SITE_NAMES = ("site-packages", "dist-packages")
_REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
HARNESS_PACKAGE = __name__.split(".")[0]  # the harness's package (lmgrade): its modules are granted, not as a library


def site_folders() -> set[Path]:
    """Every folder pip installs into that this interpreter or the system's know of."""
    found = {p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in SITE_NAMES}
    try:
        found.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    if isinstance(getattr(site, "USER_SITE", None), str):
        found.add(site.USER_SITE)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "/usr", "/usr/local"}
    for prefix in prefixes:
        for name in SITE_NAMES:
            found.update(glob.glob(os.path.join(prefix, "lib*", "python3*", name)))
        found.add(os.path.join(prefix, "lib", "python3", "dist-packages"))  # Debian's
    return {Path(os.path.realpath(p)) for p in found if os.path.isdir(p)}


# In a RECORD (each line after a newline), the first folder of each path, the files at the top, and the
# compiled files of those. A newline to search for is several times faster than a multi-line ^.
_RECORD_FOLDER = re.compile(r"\n([^/,\r\n]+)/")
_RECORD_FILE = re.compile(r"\n([^/,\r\n]+),")
_RECORD_PYCACHE = re.compile(r"\n(__pycache__/[^,\r\n]+),")


@functools.lru_cache(maxsize=64)
def _recorded(record: str, base: str) -> tuple[Path, ...]:
    names = set(_RECORD_FOLDER.findall(record)) | set(_RECORD_FILE.findall(record))
    # A module of one file has its compiled form in the folder's shared __pycache__: that file alone.
    names.discard("__pycache__")
    names.update(_RECORD_PYCACHE.findall(record))
    names.discard("..")  # scripts and data outside the folder: not what an import reads
    return tuple(Path(base) / name for name in sorted(names))


def _installed_entries(dist: metadata.Distribution) -> list[Path]:
    """The top-level files and folders `dist` installed (its RECORD), where they are."""
    try:
        record = dist.read_text("RECORD") or ""
    except OSError:
        record = ""
    return list(_recorded("\n" + record.replace("\\", "/"), str(dist.locate_file(""))))


def _tops(dist: metadata.Distribution) -> set[str]:
    return {p.name.split(".", 1)[0] for p in _installed_entries(dist)}


def _distribution_of(module: str) -> metadata.Distribution | None:
    """The distribution that installed top-level `module`; None for the standard library and the like."""
    try:
        dist = metadata.distribution(module)
        if module in _tops(dist):
            return dist
    except metadata.PackageNotFoundError:
        pass
    for name in metadata.packages_distributions().get(module, []):  # a distribution named otherwise (PyYAML)
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def library_paths(modules: Iterable[str], leave_out: Iterable[str] = ()) -> list[Path]:
    """What the distributions of `modules` installed, with every distribution they require (extras aside).

    Top-level names in `leave_out` (the harness) are not libraries here.
    """
    skipped = frozenset(leave_out)
    return list(_libraries(frozenset(m.partition(".")[0] for m in modules) - skipped, skipped))


def _module_folder(top: str) -> Path | None:
    """Where the imported top-level module `top` lies, if it was installed into a site folder."""
    module = sys.modules.get(top)
    places = list(getattr(module, "__path__", None) or [getattr(module, "__file__", None) or ""])
    if not places[0]:
        return None
    path = Path(os.path.realpath(places[0]))
    return path if any(folder in path.parents for folder in site_folders()) else None


@functools.lru_cache(maxsize=8)
def _libraries(tops: frozenset[str], skipped: frozenset[str]) -> tuple[Path, ...]:
    # Read once per process and set of libraries: torch's RECORD alone has some ten thousand lines.
    queue = [dist for top in sorted(tops) if (dist := _distribution_of(top)) is not None]
    # The modules' own folders besides, for a library installed without a RECORD (some conda packages).
    folders = [folder for top in sorted(tops) if (folder := _module_folder(top)) is not None]
    seen: dict[str, metadata.Distribution] = {}
    while queue:
        dist = queue.pop()
        name = _normalized(dist.metadata["Name"] or "")
        if name in seen:
            continue
        seen[name] = dist
        for requirement in dist.requires or ():
            if "extra" in requirement.partition(";")[2]:
                continue  # wanted only by an extra the assignment does not ask for
            match = _REQUIREMENT_NAME.match(requirement)
            if match is None or _normalized(match.group()) in seen:
                continue
            try:
                queue.append(metadata.distribution(match.group()))
            except metadata.PackageNotFoundError:
                continue  # not installed: not needed on this platform
    return tuple(
        [
            path
            for name in sorted(seen)
            for path in _installed_entries(seen[name])
            if path.name.split(".")[0] not in skipped
        ]
        + folders
    )


def harness_folder(package: str) -> Path:
    """The folder of the harness's package `package` (lmgrade), wherever it is installed."""
    return Path(os.path.realpath(sys.modules[package].__file__)).parent


def readable_paths(
    *, preload: Iterable[str], protected: Iterable[Path], public: Iterable[Path], harness: str
) -> list[Path]:
    """The paths a child's Landlock rules grant reading beneath: see the module's docstring."""
    protected = {Path(os.path.realpath(p)) for p in protected}
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *SYSTEM}
    allowed = readable_except(roots, protected | site_folders())
    allowed += readable_except(library_paths(preload, leave_out=[harness]), protected)
    # The harness's package, as a scenario may import any of its modules; installed, it holds every
    # assignment's plugin, reference and folder too, which are `protected`.
    allowed += readable_except([harness_folder(harness)], protected)
    # Granted beneath a protected folder (the plugin's own package) on purpose: they are the student's too.
    allowed += [Path(os.path.realpath(p)) for p in public if os.path.isdir(p)]
    return sorted(set(allowed))
