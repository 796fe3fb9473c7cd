"""Find the submitted files in what a student uploaded.

Students zip the folder instead of its contents, or upload from a project
with sub-folders. When the assignment's files are not at the top but all
sit together in exactly one sub-folder, that folder is graded, and the
student is told so. A .zip given instead of a folder, or a folder holding
nothing but a .zip, is unpacked (safely) and graded. A Jupyter notebook, or a
folder that lacks the files and holds one notebook, is graded as the files
its cells write, no cell run (notebook.py). A missing or misnamed file gets a
hint naming the closest files the submission does hold. `prepare` does all
of it, for every command.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

from . import notebook as notebooks
from .limits import MAX_SUBMISSION_BYTES, MAX_UNPACKED_FILES, UnreadableSubmission

# Folders that are never part of a submission: neither searched nor copied
# into the sandbox (a virtual environment beside the code can weigh gigabytes).
SKIPPED_FOLDERS = frozenset({"__MACOSX", "__pycache__", ".git", "node_modules", ".venv", "venv"})


def unpack_zip(archive: Path, into: Path) -> Path:
    """Unpack `archive` into `into`: regular files only, no path outside it, within the size bounds."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_UNPACKED_FILES:
                raise UnreadableSubmission(f"{archive.name} holds more than {MAX_UNPACKED_FILES} files")
            if sum(m.file_size for m in members) > MAX_SUBMISSION_BYTES:
                raise UnreadableSubmission(f"{archive.name} unpacks to more than {MAX_SUBMISSION_BYTES // 2**20} MiB")
            root = into.resolve()
            for member in members:
                target = (root / member.filename).resolve()
                if root not in target.parents and target != root:
                    raise UnreadableSubmission(f"{archive.name} has a path outside its folder: {member.filename}")
                if stat.S_ISLNK(member.external_attr >> 16):
                    continue  # a link could point at anything on the grading machine
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(target, "wb") as dst:
                    dst.write(src.read(MAX_SUBMISSION_BYTES + 1))
    except UnicodeDecodeError:  # a name the zip says is UTF-8 and is not: no member of it can be read
        raise UnreadableSubmission(
            f"{archive.name} could not be unpacked: a file name in it is marked UTF-8 and is not; zip the files again"
        ) from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise UnreadableSubmission(f"{archive.name} could not be unpacked ({exc})") from None
    return into


def lone_zip(folder: Path) -> Path | None:
    """The .zip that is all a folder holds (hidden files aside), or None.

    A student who uploads a .zip to Gradescope gets a folder with that one
    file in it: it is unpacked and graded as a .zip given directly would be.
    """
    try:
        held = [
            path
            for relative, path in submission_files(folder)
            if not any(part.startswith(".") for part in relative.split("/"))
        ]
    except OSError:
        return None
    if len(held) == 1 and held[0].suffix.lower() == ".zip":
        return held[0]
    return None


def missing_hint(folder: Path, files: tuple[str, ...]) -> str:
    """What to tell a student whose submission lacks some of `files`: what it holds instead."""
    if not folder.is_dir():
        return f"The submission folder {folder.name} does not exist: nothing was graded."
    held = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file()
        and not any(part in SKIPPED_FOLDERS or part.startswith(".") for part in p.relative_to(folder).parts)
    )
    missing = [f for f in files if not (folder / f).is_file()]
    if not missing:
        return ""
    if not held:
        return f"The submission is empty: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing."
    lines = []
    for name in missing:
        close = difflib.get_close_matches(name, held, n=3, cutoff=0.5)
        others = close + [h for h in held if h not in close]
        shown = ", ".join(f"`{h}`" for h in others[:6]) + (", ..." if len(others) > 6 else "")
        line = f"{name} is missing; the submission holds {shown}"
        if close:
            line += f" - rename `{close[0]}` to `{name}`?"
        lines.append(line)
    return "\n".join(lines)


MAX_DEPTH = 3


def walk(folder: Path):
    """`os.walk` of what a submission holds: (folder, its sub-folders, its files).

    Symlinks are left out (one could point at the reference), and so are the
    `SKIPPED_FOLDERS`. What the sandbox copies for a run and what a regrade
    hashes and sends to its workers.
    """
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d not in SKIPPED_FOLDERS and not os.path.islink(os.path.join(root, d))]
        yield (
            Path(root),
            dirs,
            [n for n in names if os.path.isfile(os.path.join(root, n)) and not os.path.islink(os.path.join(root, n))],
        )


def submission_files(folder: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every file `walk` finds under `folder`, sorted."""
    return sorted(
        ((root / name).relative_to(folder).as_posix(), root / name) for root, _, names in walk(folder) for name in names
    )


def hash_files(digest, files: list[tuple[str, Path]]) -> None:
    """Feed the names and bytes of `files` to `digest`."""
    for relative, path in files:
        with open(path, "rb") as f:
            # Lengths first, so no two different trees hash the same bytes. A name is the file system's
            # bytes (os.fsencode): a Latin-1 name, undecodable as UTF-8, hashes as what it is on disk.
            name = os.fsencode(relative)
            digest.update(b"%d:%s:%d:" % (len(relative), name, os.fstat(f.fileno()).st_size))
            while chunk := f.read(1 << 20):  # a dataset left beside the code can weigh gigabytes
                digest.update(chunk)


def content_hash(folder: Path) -> str:
    """SHA-256 of the names and bytes of a submission's files: the files the sandbox copies, so all that is graded."""
    digest = hashlib.sha256(b"lmgrade submission\0")
    hash_files(digest, submission_files(folder))
    return digest.hexdigest()


def graded_files_hash(folder: Path, files: tuple[str, ...]) -> str:
    """SHA-256 of the names and bytes of the assignment's `files` found in `folder` ("" if none is).

    What two identical submissions share, whatever else their folders hold
    (a README, a zip of the same files, a notebook).
    """
    present = [(name, folder / name) for name in files if (folder / name).is_file()]
    if not present:
        return ""
    digest = hashlib.sha256(b"lmgrade graded files\0")
    hash_files(digest, present)
    return digest.hexdigest()


def copy_files(src: Path, dst: Path, *, leave_out: Callable[[Path], bool] = lambda path: False) -> None:
    """Copy what `walk` finds in `src` into a new folder `dst`, up to MAX_SUBMISSION_BYTES.

    A file that goes away while it is copied is left out: it was not there
    to grade. That happens: the results file of a grading, written into the
    folder it grades while its checks copy it, is replaced atomically, and
    its temporary file lives for milliseconds. Raises ValueError when the
    files are too large together, OSError when one cannot be read.
    """
    budget = MAX_SUBMISSION_BYTES
    dst.mkdir()
    for root, dirs, files in walk(src):
        rel = root.relative_to(src)
        for d in dirs:
            (dst / rel / d).mkdir()
        for name in files:
            path = root / name
            if leave_out(path):
                continue
            try:
                budget -= path.stat().st_size
                if budget < 0:
                    raise ValueError(f"submission is larger than {MAX_SUBMISSION_BYTES // 2**20} MiB")
                shutil.copyfile(path, dst / rel / name, follow_symlinks=False)
            except FileNotFoundError:
                continue


def locate(folder: Path, files: tuple[str, ...]) -> tuple[Path, str]:
    """(the folder to grade, a note for the student or "")."""
    folder = Path(folder)
    if all((folder / f).is_file() for f in files):
        return folder, ""
    found = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        depth = len(Path(root).relative_to(folder).parts)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_FOLDERS
            and not d.startswith(".")
            and depth < MAX_DEPTH
            and not os.path.islink(os.path.join(root, d))
        )
        if all(f in names and os.path.isfile(os.path.join(root, f)) for f in files):
            found.append(Path(root))
    if len(found) != 1:
        return folder, ""
    where = found[0].relative_to(folder).as_posix()
    return found[
        0
    ], f"{', '.join(files)} {'was' if len(files) == 1 else 'were'} found in {where}/ and graded from there."


def notebooks_in(folder: Path) -> list[Path]:
    """The Jupyter notebooks a folder holds (hidden files and folders aside), to the depth `locate` searches.

    A student who uploads a notebook to Gradescope gets a folder with that
    file in it, perhaps beside other files.
    """
    try:
        return [
            path
            for relative, path in submission_files(folder)
            if path.suffix.lower() == ".ipynb"
            and len(relative.split("/")) <= MAX_DEPTH + 1
            and not any(part.startswith(".") for part in relative.split("/"))
        ]
    except OSError:
        return []


def prepare(submission: Path, files: tuple[str, ...], scratch: Path) -> tuple[Path, list[str]]:
    """(the folder that holds the files to grade, what to tell the student about it).

    `submission` is a folder, a .zip or a Jupyter notebook. A .zip, or a
    folder holding nothing but one, is unpacked into `scratch`. A notebook, or
    a folder (given or unpacked) that lacks the assignment's `files` and holds
    one notebook, is graded as the files its cells write (see notebook.py),
    beside the folder's other files. Files in one sub-folder are found there
    (`locate`), and a file still missing is named with what the submission
    holds instead. Every command grades what this returns.
    """
    said = []
    archive = submission if submission.is_file() and submission.suffix.lower() == ".zip" else None
    alone = lone_zip(submission) if submission.is_dir() else None
    notebook = submission if submission.is_file() and submission.suffix.lower() == ".ipynb" else None
    folder = submission
    if archive is not None or alone is not None:
        try:
            folder = unpack_zip(archive or alone, scratch / "submission")
            said.append(
                f"{archive.name}: graded the files of the .zip."
                if archive is not None
                else f"The submission holds only {alone.name}: it was unpacked and its files graded."
            )
        except UnreadableSubmission as exc:
            return _empty(scratch), [str(exc)]
    elif notebook is None and not submission.is_dir():
        what = "is not a folder, a .zip or a Jupyter notebook" if submission.exists() else "does not exist"
        return _empty(scratch), [f"{submission} {what}: nothing was graded."]
    if notebook is None:
        located, note = locate(folder, files)
        if all((located / f).is_file() for f in files):
            return located, [*said, note] if note else said
        found = notebooks_in(folder)
        if len(found) != 1:
            hint = missing_hint(located, files)
            if found:  # which of them is the submission cannot be known
                shown = ", ".join(f"`{path.relative_to(folder).as_posix()}`" for path in found[:4])
                hint = (
                    f"The submission holds {len(found)} notebooks ({shown}{', ...' if len(found) > 4 else ''}) "
                    f"and not {', '.join(files)}: submit one notebook, or the files."
                )
            return located, [text for text in (*said, note, hint) if text]
        notebook = found[0]
    graded = scratch / "notebook"
    try:
        if notebook != submission:  # the files beside the notebook (a helper module) are graded too
            copy_files(notebook.parent, graded, leave_out=lambda path: path.suffix.lower() == ".ipynb")
        return graded, [*said, *notebooks.unpack(notebook, graded, files)]
    except (UnreadableSubmission, ValueError, OSError) as exc:
        return _empty(scratch), [*said, str(exc)]


def _empty(scratch: Path) -> Path:
    folder = scratch / "empty"
    folder.mkdir(exist_ok=True)
    return folder
