"""Flawed submissions made by editing the reference: one realistic bug each.

A plugin's catalogue of bugs (its `lmgrade_bugs` hook) serves three uses: the
tests that prove its graders (each bug must lose points on the right check,
with the right words), the demo's flawed submission, and the instructor
reading what the graders catch. A bug is kept as the reference's lines and
what a student wrote instead, so the catalogue stays in step with the
reference: an edit whose lines are gone from the reference fails loudly.
A bug that is a known mistake's edit is declared from it
(`Bug.from_mistake`), so the edit is written once.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # flawed needs no numpy: a Mistake is only read here
    from .checks import Mistake


class StaleBug(AssertionError):
    """A bug's edit no longer matches the reference."""


@dataclass(frozen=True)
class Bug:
    """A realistic bug of an assignment, as edits of its reference: what a plugin's `lmgrade_bugs` gives.

    The test suite of a plugin grades each bug as a submission (the reference with the edits made) and
    requires it to lose points on every check `loses` names, with those words in the check's feedback;
    an edit whose text is no longer in the reference fails loudly (`StaleBug`).

    Example:
        ```python
        Bug("mean divides by len(values) - 1.", "stats.py", (("/ len(values)", "/ (len(values) - 1)"),),
            {"mean": "off_by_one", "mean_hidden": ""}, demo=True)
        ```
    """

    what: str
    """One sentence: the bug as a student would make it."""
    file: str
    """The submitted file it changes."""
    edits: tuple[tuple[str, str], ...]
    """`(the reference's text, what the student wrote instead)` pairs; each text must occur exactly once in
    the file."""
    loses: dict[str, str] = field(default_factory=dict)
    """`{check: words its feedback must contain}`: the checks that must lose points to it ("" where any
    feedback will do), e.g. the name of the known mistake the check should name."""
    demo: bool = False
    """Part of the flawed submission `lmgrade demo` grades."""
    variant: dict[str, str] = field(default_factory=dict)
    """The variant it is graded in, as --set settings (`{"positions": "rope"}`); empty: the default one."""

    @classmethod
    def from_mistake(
        cls,
        mistake: Mistake,
        loses: dict[str, str],
        what: str | None = None,
        *,
        demo: bool = False,
        variant: dict[str, str] | None = None,
    ) -> Bug:
        """The bug a student makes by making `mistake`: the mistake's own edits, never written twice.

        `mistake` must be made by edits (not by a patch alone), all in one file; `what` defaults to
        its explanation. Raises ValueError otherwise.
        """
        if mistake.patch is not None or not mistake.edits:
            raise ValueError(f"{mistake.name}: only a mistake made by edits alone is a bug's edit")
        files = {file for file, _, _ in mistake.edits}
        if len(files) != 1:
            raise ValueError(f"{mistake.name}: its edits change {sorted(files)}; a bug changes one file")
        return cls(
            what or mistake.explanation.rstrip(".") + ".",
            files.pop(),
            tuple((old, new) for _, old, new in mistake.edits),
            dict(loses),
            demo=demo,
            variant=dict(variant or {}),
        )


def without_docstring(source: str) -> str:
    """`source` without its module docstring (a reference's says it is the reference)."""
    body = ast.parse(source).body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        lines = source.splitlines(keepends=True)
        return "".join(lines[body[0].end_lineno :]).lstrip("\n")
    return source


def apply(source: str, edits: tuple[tuple[str, str], ...], where: str) -> str:
    for old, new in edits:
        if source.count(old) != 1:
            raise StaleBug(f"{where}: the reference no longer has exactly one {old!r}")
        source = source.replace(old, new)
    return source


def write_flawed(reference: Path, files: tuple[str, ...], folder: Path, bugs: list[Bug]) -> Path:
    """A submission folder: the reference's files with every bug of `bugs` made."""
    folder.mkdir(parents=True, exist_ok=True)
    for filename in files:
        source = without_docstring((reference / filename).read_text(encoding="utf-8"))
        mine = [bug for bug in bugs if bug.file == filename]
        for bug in mine:
            source = apply(source, bug.edits, f"{filename} ({bug.what})")
        header = "; ".join(bug.what for bug in mine) or "no bug in this file."
        (folder / filename).write_text(f'"""A flawed {filename}: {header}"""\n\n{source}', encoding="utf-8")
    return folder
