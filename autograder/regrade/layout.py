"""Which folders of a submissions root are submissions, and whose they are.

Every sub-folder of the root is one submission, named by its folder. A
Gradescope "Export Submissions" download adds, beside the folders, one
``submission_metadata.yml``: a mapping from each folder's name to what
Gradescope knows of it, written by Ruby with a colon before every key
(``:submitters:``, each with ``:name:``, ``:email:``, ``:sid:``). Group
submissions list several submitters. The export sometimes arrives wrapped in
one more folder; that folder is looked into.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .graded import describe_failure

METADATA = "submission_metadata.yml"
# Never submissions: what archivers and editors leave behind.
_NOT_SUBMISSIONS = {"__MACOSX", "__pycache__"}


class LayoutError(ValueError):
    """The submissions root cannot be read as one folder per submission: the user's to fix."""


@dataclass(frozen=True)
class Student:
    name: str = ""
    email: str = ""
    sid: str = ""


@dataclass(frozen=True)
class SubmissionFolder:
    key: str  # the folder's name: the submission's name in the CSV and the results
    folder: Path
    students: tuple[Student, ...] = ()


@dataclass
class Layout:
    root: Path  # where the submission folders are
    submissions: list[SubmissionFolder]
    notes: list[str] = field(default_factory=list)  # what the user should know about the reading


class _RubyTolerantLoader(yaml.SafeLoader):
    """Safe loading that reads a Ruby-tagged value (``!ruby/object:...``) as the plain data under it."""


def _plain(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_RubyTolerantLoader.add_multi_constructor("!", _plain)


def _unkeyed(value):
    """Ruby's ``:key`` spelling made plain: ``{":name": x}`` -> ``{"name": x}``, all the way down."""
    if isinstance(value, dict):
        return {str(k).lstrip(":"): _unkeyed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unkeyed(v) for v in value]
    return value


def read_metadata(path: Path) -> dict[str, tuple[Student, ...]]:
    """{folder name: its submitters} from a Gradescope submission_metadata.yml."""
    try:
        data = _unkeyed(yaml.load(path.read_text(encoding="utf-8"), Loader=_RubyTolerantLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LayoutError(
            f"{path}: cannot be read as Gradescope's submission metadata ({describe_failure(exc)})"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LayoutError(f"{path}: expected a mapping from submission folder to its metadata")
    out = {}
    for folder, entry in data.items():
        submitters = entry.get("submitters") if isinstance(entry, dict) else None
        out[str(folder)] = tuple(
            Student(*(str(person.get(k) or "") for k in ("name", "email", "sid")))
            for person in (submitters if isinstance(submitters, list) else [])
            if isinstance(person, dict)
        )
    return out


def natural_key(name: str) -> list:
    """submission_9 before submission_10: digits compared as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def _candidate_folders(root: Path, exclude: set[Path]) -> list[Path]:
    return sorted(
        (
            p
            for p in root.iterdir()
            if p.is_dir()
            and not p.is_symlink()
            and not p.name.startswith(".")
            and p.name not in _NOT_SUBMISSIONS
            and p.resolve() not in exclude
        ),
        key=lambda p: natural_key(p.name),
    )


def discover(root: Path, exclude: tuple[Path, ...] = ()) -> Layout:
    """The submissions under `root`, in natural order of their names.

    `exclude`: folders that are never submissions (the regrade's own output,
    when it is written inside the root).
    """
    root = Path(root)
    if not root.is_dir():
        raise LayoutError(f"{root} is not a folder")
    excluded = {Path(p).resolve() for p in exclude}
    notes = []
    folders = _candidate_folders(root, excluded)
    if not (root / METADATA).is_file() and len(folders) == 1 and (folders[0] / METADATA).is_file():
        notes.append(f"reading the export in {folders[0].name}/")
        root = folders[0]
        folders = _candidate_folders(root, excluded)
    if not folders:
        raise LayoutError(f"{root} holds no sub-folders: every sub-folder of SUBMISSIONS_ROOT is one submission")
    metadata = read_metadata(root / METADATA) if (root / METADATA).is_file() else {}
    if metadata:
        unlisted = [f.name for f in folders if f.name not in metadata]
        if unlisted:
            notes.append(
                f"{len(unlisted)} folder(s) not in {METADATA}, graded without a student: "
                + ", ".join(unlisted[:5])
                + (" ..." if len(unlisted) > 5 else "")
            )
    submissions = [SubmissionFolder(f.name, f, metadata.get(f.name, ())) for f in folders]
    return Layout(root, submissions, notes)
