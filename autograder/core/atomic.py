"""Files replaced whole: a reader sees the old file or the new one, never half of one.

results.json is read while it is written (by Gradescope, by the course's
tools, by a grading that snapshots the folder it writes into): each write
goes to a temporary file beside it, then replaces it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

TEMPORARY_PREFIX = ".results-"


def is_temporary_results(path: Path) -> bool:
    """Whether `path` is a results file still being written (by `write_atomically`)."""
    return path.name.startswith(TEMPORARY_PREFIX) and path.suffix == ".json"


def write_atomically(path: Path, document: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=2)
            f.write("\n")
            f.flush()
            # mkstemp makes it 0600; the course's tools (and Gradescope) read it as another user.
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
