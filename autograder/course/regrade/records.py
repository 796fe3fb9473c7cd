"""A regrade's files per submission: its Gradescope results.json and what resuming needs.

Under the results folder, each submission has a folder of its own name
with ``results.json`` (Gradescope's format, as `lmgrade grade` writes it)
and ``regrade.json``: the submission's content hash, the grading
fingerprint and its `Graded`. Both are replaced atomically as soon as the
submission is graded, so an interrupted regrade keeps everything it finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...core.atomic import write_atomically
from ...declare.checks import Check
from ...reports.gradescope import results_json
from ...reports.results import HARNESS_FAULT_NOTE
from .graded import Graded

RESULTS_FOLDER = "results"  # beside the scores CSV
RECORD = "regrade.json"
RESULTS = "results.json"


@dataclass(frozen=True)
class Record:
    content_hash: str
    fingerprint: str
    graded: Graded


class ResultsFolder:
    """The results folder of one regrade: a folder per submission, named by its key."""

    def __init__(self, folder: Path, checks: list[Check]):
        self.folder = Path(folder)
        self.checks = list(checks)

    def results_path(self, key: str) -> Path:
        return self.folder / key / RESULTS

    def finished(self, key: str, content_hash: str, fingerprint: str) -> Graded | None:
        """The grade recorded for this very content and grading, if there is one and nothing is missing."""
        try:
            data = json.loads((self.folder / key / RECORD).read_text(encoding="utf-8"))
            record = Record(data["content_hash"], data["fingerprint"], Graded.from_dict(data["graded"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if (
            (record.content_hash, record.fingerprint) != (content_hash, fingerprint)
            or record.graded.error
            or not self.results_path(key).is_file()
        ):
            return None
        return record.graded

    def save(self, key: str, content_hash: str, fingerprint: str, graded: Graded) -> None:
        """Write the submission's results.json, then (if it was graded) its record."""
        write_atomically(self.results_path(key), self.results_document(graded))
        if not graded.error:  # a failure is graded again next time
            write_atomically(
                self.folder / key / RECORD,
                {"content_hash": content_hash, "fingerprint": fingerprint, "graded": graded.as_dict()},
            )

    def results_document(self, graded: Graded) -> dict:
        scores = {c.name: c for c in graded.checks}
        numbered = list(enumerate(self.checks, start=1))
        done = {n: scores[c.name] for n, c in numbered if c.name in scores}
        output = f"{HARNESS_FAULT_NOTE}\n{graded.error}" if graded.error else graded.note
        document = results_json(numbered, done, output=output)
        document["execution_time"] = graded.wall_s
        return document
