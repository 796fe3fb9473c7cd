"""Submissions that do no work, made from an assignment's own stubs.

Every body that the stub leaves to the student (``raise NotImplementedError``)
becomes ``return CONSTANT`` or ``raise ValueError``. A method the contract
says returns its own object (``fit(...) -> "NGramLM"``) returns ``self``, so
that the calls after it reach the constants too. Such a submission must score
exactly 0, on property checks too (`lmgrade selftest` proves it).
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..declare import templates

CONSTANTS = ("None", "0", "1.0", "[]", "{}")
RAISES = "raise ValueError('no')"


def _returns_self(fn: ast.FunctionDef, classes: list[str]) -> bool:
    ann = fn.returns
    name = ann.value if isinstance(ann, ast.Constant) else getattr(ann, "id", None)
    return bool(fn.args.args) and fn.args.args[0].arg == "self" and name in classes


def degenerate_source(stub: str, body: str) -> str:
    """The stub with every NotImplementedError replaced by `body`."""
    tree = ast.parse(stub)
    classes = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    lines = stub.splitlines(keepends=True)
    edits = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        last = fn.body[-1]
        if not (isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last)):
            continue
        if body == RAISES:
            new = RAISES
        elif fn.name == "__init__":
            new = "pass"
        elif _returns_self(fn, classes):
            new = "return self"
        else:
            new = f"return {body}"
        edits.append((last.lineno, last.end_lineno, last.col_offset, new))
    for start, end, col, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = [" " * col + new + "\n"]
    return "".join(lines)


def write_degenerate(assignment, variant, folder: Path, body: str) -> Path:
    """A submission folder of `assignment` whose every stub body is `body`."""
    folder.mkdir(parents=True, exist_ok=True)
    rendered = templates.render(assignment, variant)
    for filename in assignment.spec.files:
        (folder / filename).write_text(degenerate_source(rendered[filename], body))
    return folder
