"""Which folders of a submissions root are submissions, and whose they are.

Every sub-folder of the root is one submission, named by its folder. A
Gradescope "Export Submissions" download adds, beside the folders, one
``submission_metadata.yml``: a mapping from each folder's name to what
Gradescope knows of it, written by Ruby with a colon before every key
(``:submitters:``, each with ``:name:``, ``:email:``, ``:sid:``). Group
submissions list several submitters, and ``:score:`` is the score Gradescope
gave (`SubmissionFolder.original_score`: scores.csv and the report show it
beside the regrade's). The export sometimes arrives wrapped in one more
folder; that folder is looked into.

A folder's name is the file system's bytes: one that is not UTF-8 (a Latin-1
name) is keyed by `cells.printable`'s spelling of it (``caf\\xe9``), which
every output can write; its files are read from the folder itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from .cells import printable
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
    key: str  # the folder's name (`cells.printable`): the submission's name in the CSV and the results
    folder: Path
    students: tuple[Student, ...] = ()
    original_score: float | None = None  # the score Gradescope gave, where the export says it


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


@dataclass(frozen=True)
class ExportEntry:
    """What the export's metadata says of one submission folder."""

    students: tuple[Student, ...] = ()
    score: float | None = None  # Gradescope's score of it, where given


def _score(value) -> float | None:
    """A score as the metadata writes it: a number, its text, or Ruby's BigDecimal (``!ruby/object:BigDecimal
    18:0.95e2``, digits of precision before the colon); None for anything else (nil, NaN, a word)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        value = value.rpartition(":")[2].strip()
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return score if score == score and abs(score) != float("inf") else None


def read_export(path: Path) -> dict[str, ExportEntry]:
    """{folder name: its submitters and Gradescope's score} from a Gradescope submission_metadata.yml."""
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
        entry = entry if isinstance(entry, dict) else {}
        submitters = entry.get("submitters")
        students = tuple(
            Student(*(str(person.get(k) or "") for k in ("name", "email", "sid")))
            for person in (submitters if isinstance(submitters, list) else [])
            if isinstance(person, dict)
        )
        out[str(folder)] = ExportEntry(students, _score(entry.get("score")))
    return out


def read_metadata(path: Path) -> dict[str, tuple[Student, ...]]:
    """{folder name: its submitters} from a Gradescope submission_metadata.yml."""
    return {folder: entry.students for folder, entry in read_export(path).items()}


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
    metadata = read_export(root / METADATA) if (root / METADATA).is_file() else {}
    if metadata:
        unlisted = [printable(f.name) for f in folders if f.name not in metadata]
        if unlisted:
            notes.append(
                f"{len(unlisted)} folder(s) not in {METADATA}, graded without a student: "
                + ", ".join(unlisted[:5])
                + (" ..." if len(unlisted) > 5 else "")
            )
    submissions = []
    for folder in folders:
        entry = metadata.get(folder.name, ExportEntry())
        submissions.append(SubmissionFolder(printable(folder.name), folder, entry.students, entry.score))
    keys = [s.key for s in submissions]
    if len(set(keys)) != len(keys):  # a Latin-1 name spelt as another folder's actual name: keep both apart
        seen: set[str] = set()
        for i, submission in enumerate(submissions):
            key = submission.key
            while key in seen:
                key += "_"
            seen.add(key)
            submissions[i] = replace(submission, key=key)
    return Layout(root, submissions, notes)
