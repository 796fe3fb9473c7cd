"""Find the submitted files in the folder a student uploaded.

Students zip the folder instead of its contents, or upload from a project
with sub-folders. When the assignment's files are not at the top but all
sit together in exactly one sub-folder, that folder is graded, and the
student is told so.
"""

from __future__ import annotations

import os
from pathlib import Path

# Folders that are never part of a submission: neither searched nor copied
# into the sandbox (a virtual environment beside the code can weigh gigabytes).
SKIPPED_FOLDERS = frozenset({"__MACOSX", "__pycache__", ".git", "node_modules", ".venv", "venv"})
MAX_DEPTH = 3


def locate(folder: Path, files: tuple[str, ...]) -> tuple[Path, str]:
    """(the folder to grade, a note for the student or "")."""
    folder = Path(folder)
    if all((folder / f).is_file() for f in files):
        return folder, ""
    found = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        depth = len(Path(root).relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith(".") and depth < MAX_DEPTH
                         and not os.path.islink(os.path.join(root, d)))
        if all(f in names and os.path.isfile(os.path.join(root, f)) for f in files):
            found.append(Path(root))
    if len(found) != 1:
        return folder, ""
    where = found[0].relative_to(folder).as_posix()
    return found[0], f"{', '.join(files)} {'was' if len(files) == 1 else 'were'} found in {where}/ and graded from there."
