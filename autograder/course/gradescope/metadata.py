"""Who submitted: Gradescope's submission_metadata.json, read for per-student hidden inputs.

Gradescope writes it beside the submission folder (/autograder/submission_metadata.json), never inside it:
the student cannot choose what it says. Its ``users`` are the submitters (several for a group), each with
``email``, ``sid``, ``name`` and Gradescope's ``id``. They are read as the regrade reads its export's
submission_metadata.yml (`regrade.layout.Student`), so that both name a student the same way
(`hidden_inputs.student_identity`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..regrade.layout import Student

METADATA = "submission_metadata.json"


def read_submitters(path: Path) -> tuple[Student, ...]:
    """The submitters the metadata file at `path` lists; none where it is missing or cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ()
    users = data.get("users") if isinstance(data, dict) else None
    return tuple(
        Student(*(str(user.get(key) or "") for key in ("name", "email", "sid")))
        for user in (users if isinstance(users, list) else [])
        if isinstance(user, dict)
    )


def beside(submission: Path) -> Path:
    """Where the metadata of `submission` is: in the folder that holds it, as Gradescope lays it out."""
    return Path(submission).resolve().parent / METADATA
