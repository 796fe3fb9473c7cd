"""What a regrade remembers to know whether a submission must be graded again.

A submission is graded again when its files change (`submission.content_hash`) or when
anything that decides its score does (`grading_fingerprint`): lmgrade's
version and sources, the assignment, its variant, the reference, the
plugins' checks and the course secret (only a digest of it is kept). A Dask
worker computes the same fingerprint from its own installation, so a worker
with other code or another secret is refused instead of grading differently.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from ... import __version__
from ...declare.assignment import Assignment
from ...submissions.submitted_files import SKIPPED_FOLDERS, content_hash, hash_files, submission_files

HARNESS = Path(__file__).resolve().parents[2]
# Of the harness's, the assignment's and the plugins' files, those that can
# change a score; the same on every installation (an editable one has more).
_SOURCE_SUFFIXES = (".py", ".toml")


def _refuse(error: OSError) -> None:
    raise error


def submission_hash(folder: Path) -> str:
    """`submission.content_hash` of a submission folder, raising OSError where a folder of it cannot be read.

    `content_hash` walks as the sandbox copies, and a walk passes over a folder
    it cannot list as if it were empty: the submission would be graded without
    its files, and its row would say 0 instead of why.
    """
    for root, dirs, _ in os.walk(folder, onerror=_refuse):
        dirs[:] = [d for d in dirs if d not in SKIPPED_FOLDERS and not os.path.islink(os.path.join(root, d))]
    return content_hash(folder)


def read_files(folder: Path) -> dict[str, bytes]:
    """A submission's files as bytes, to grade it on a machine that cannot see this disk."""
    return {relative: path.read_bytes() for relative, path in submission_files(folder)}


def write_files(files: dict[str, bytes], folder: Path) -> None:
    """Lay `read_files`' output out again under `folder`, refusing paths that leave it."""
    folder = folder.resolve()
    for relative, data in files.items():
        target = (folder / relative).resolve()
        if folder not in target.parents:
            raise ValueError(f"a submission file's path leaves its folder: {relative!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _source_folders(assignment: Assignment) -> list[Path]:
    """Where the code that decides a score lives: the harness, the assignment, its reference, the checks."""
    spec = assignment.spec
    folders = {HARNESS, spec.root, spec.reference_folder()}
    folders |= {path.resolve().parent for path in assignment.check_module_files().values()}
    return sorted(folders)


def _source_files(folder: Path) -> list[tuple[str, Path]]:
    # Named by the folder's own name, not where it is installed: a worker's
    # copy of lmgrade hashes the same as the client's.
    return [
        (f"{folder.name}/{relative}", path)
        for relative, path in submission_files(folder)
        if path.suffix in _SOURCE_SUFFIXES
    ]


def secret_digest(secret: str) -> str:
    return hashlib.sha256(b"lmgrade secret\0" + secret.encode()).hexdigest()


@cache
def _sources_hash(folders: tuple[Path, ...]) -> str:
    digest = hashlib.sha256(b"lmgrade sources\0")
    for folder in folders:
        hash_files(digest, _source_files(folder))
    return digest.hexdigest()


def grading_fingerprint(assignment: Assignment, variant: dict, secret: str, device: str = "auto") -> str:
    """One hash of everything besides the submission that decides its score.

    The device is the assignment's own once bound; unbound (a Dask client's),
    the --device asked for, which the workers agree on before grading.
    """
    identity = {
        "lmgrade": __version__,
        "assignment": assignment.name,
        "device": assignment.device or f"asked: {device}",
        "variant": {k: str(v) for k, v in sorted(variant.items())},
        # Where a check runs changes its sizes and bounds: a GPU regrade grades again.
        "checks": [[c.name, c.points, c.visibility, c.device, bool(c.unavailable)] for c in assignment.checks],
        "secret": secret_digest(secret),
        "sources": _sources_hash(tuple(_source_folders(assignment))),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
