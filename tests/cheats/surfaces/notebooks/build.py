"""Hostile notebooks, written from docs/notebooks.md alone: each attack is bytes for a `.ipynb`.

Every attack is a function of (the text of a correct `ngram.py`, a marker folder it may try to write into)
returning the notebook's bytes; `ATTACKS` says, for each, whether the notebook is one the grader must refuse
(graded 0 with one line) or one it must grade as the correct file its `%%writefile` cell holds (full marks).

    python tests/cheats/surfaces/notebooks/build.py OUT CORRECT_NGRAM_PY   # every attack as OUT/<attack>.ipynb
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024


def _cell(source: str, kind: str = "code", tags: tuple[str, ...] = ()) -> dict:
    cell = {"cell_type": kind, "metadata": {"tags": list(tags)} if tags else {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(cells: list[dict], **extra) -> dict:
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
        **extra,
    }


def _dumps(document) -> bytes:
    return json.dumps(document).encode("utf-8")


def _spliced(document, raw: bytes) -> bytes:
    """`document` as JSON with the string value "@@RAW@@" in it replaced by the bytes `raw`."""
    return _dumps(document).replace(b'"@@RAW@@"', raw, 1)


def _correct_cell(ngram: str) -> dict:
    return _cell("%%writefile ngram.py\n" + ngram)


# Refused: the grader must give 0 and one line, never a traceback or a hang.


def deep_nesting(ngram: str, marker: Path) -> bytes:
    """The correct cell, and metadata nested 100,000 levels deep (docs: deeper than 64 is refused)."""
    depth = 100_000
    return _spliced(_notebook([_correct_cell(ngram)], deep="@@RAW@@"), b"[" * depth + b"]" * depth)


def million_tiny_cells(ngram: str, marker: Path) -> bytes:
    """2.5 million empty cells (`{}`) after the correct one: 7.5 MB, more JSON values than the documented
    bound."""
    tiny = b"{}"
    return _spliced(_notebook([_correct_cell(ngram), "@@RAW@@"]), b",".join([tiny] * 2_500_000))


def over_64_mib(ngram: str, marker: Path) -> bytes:
    """The correct cell and a markdown cell of 65 MiB: larger than any submission may be."""
    return _dumps(_notebook([_correct_cell(ngram), _cell("x" * (65 * MIB), kind="markdown")]))


def invalid_utf8(ngram: str, marker: Path) -> bytes:
    """The correct notebook with Latin-1 bytes in a comment of its code cell."""
    return _dumps(_notebook([_correct_cell("# caf\u00e9\n" + ngram)])).replace(b"caf\\u00e9", b"caf\xe9")


def lone_surrogate(ngram: str, marker: Path) -> bytes:
    """Valid JSON whose code cell holds an unpaired surrogate escape (no UTF-8 spelling exists for it)."""
    return _dumps(_notebook([_correct_cell("# \ud800\n" + ngram)]))


def huge_integer(ngram: str, marker: Path) -> bytes:
    """Valid JSON with a 100,000-digit integer in the metadata (Python refuses to parse past 4300 digits)."""
    return _spliced(_notebook([_cell("print(1)")], big="@@RAW@@"), b"7" * 100_000)


def nan_and_infinity(ngram: str, marker: Path) -> bytes:
    """Not JSON: NaN and -Infinity literals (Python's json accepts them, the standard does not)."""
    return _spliced(_notebook([_cell("print(1)")], a="@@RAW@@"), b"[NaN, -Infinity]")


def truncated(ngram: str, marker: Path) -> bytes:
    """The correct notebook cut in the middle of its code cell."""
    data = _dumps(_notebook([_correct_cell(ngram)]))
    return data[: len(data) // 2]


def empty_file(ngram: str, marker: Path) -> bytes:
    return b""


def json_array(ngram: str, marker: Path) -> bytes:
    """Valid JSON, not a notebook: a list of cells."""
    return _dumps([_correct_cell(ngram)])


def json_string(ngram: str, marker: Path) -> bytes:
    """Valid JSON, not a notebook: the code as one string."""
    return _dumps("%%writefile ngram.py\n" + ngram)


def cells_not_a_list(ngram: str, marker: Path) -> bytes:
    """A notebook whose `cells` is a mapping of one correct cell."""
    return _dumps(_notebook({"0": _correct_cell(ngram)}))  # type: ignore[arg-type]


def cells_of_wrong_types(ngram: str, marker: Path) -> bytes:
    """Cells that are numbers, strings, null, and a code cell whose source is a mapping and one whose source
    is a list of numbers."""
    cells = [5, "code", None, [], {"cell_type": "code", "source": {"a": 1}}, {"cell_type": "code", "source": [1, 2]}]
    return _dumps(_notebook(cells))  # type: ignore[arg-type]


def unknown_version(ngram: str, marker: Path) -> bytes:
    """The correct cell in a notebook that says nbformat 99."""
    document = _notebook([_correct_cell(ngram)])
    document["nbformat"] = 99
    return _dumps(document)


def utf16_encoded(ngram: str, marker: Path) -> bytes:
    """The correct notebook, encoded in UTF-16 with its byte-order mark."""
    return json.dumps(_notebook([_correct_cell(ngram)])).encode("utf-16")


# Graded: the grader must write only the correct cell's file, nowhere else, and pay full marks.


def correct(ngram: str, marker: Path) -> bytes:
    """The control: one `%%writefile ngram.py` cell holding a correct submission."""
    return _dumps(_notebook([_cell("# ngram\nThe handout.", kind="markdown"), _correct_cell(ngram)]))


def writes_outside(ngram: str, marker: Path) -> bytes:
    """Cells that write outside the submission: `..`, absolute paths, a sub-folder, `~`, `$VAR`, quoted names,
    a second argument, a backslash, a Unicode line separator, a shell escape and a `%%bash` cell, each aimed
    at the marker folder, then the correct cell."""
    evil = "raise SystemExit('CHEAT-FOUND: a refused cell was imported')\n"
    target = str(marker)
    cells = [
        _cell(f"%%writefile {target}/absolute.py\n{evil}"),
        _cell(f"%%writefile -a {target}/append.py\n{evil}"),
        _cell(f"%%file {target}/file_magic.py\n{evil}"),
        _cell(f"%%writefile ../../../../../../../..{target}/dotdot.py\n{evil}"),
        _cell(f"%%writefile ../escape.py\n{evil}"),
        _cell(f"%%writefile sub/inner.py\n{evil}"),
        _cell(f"%%writefile ~/home.py\n{evil}"),
        _cell(f"%%writefile $HOME/env.py\n{evil}"),
        _cell(f"%%writefile {{target}}/braces.py\n{evil}"),
        _cell(f"# FILE: {target}/marked.py\n{evil}"),
        _cell(f"# FILE: -a ../marked_append.py\n{evil}"),
        _cell(f"%%writefile ngram.py/../../escape2.py\n{evil}"),
        _cell(f"%%writefile ./../escape3.py\n{evil}"),
        _cell(f"%%writefile nul.py\x00{target}/nul.py\n{evil}"),
        _cell(f'%%writefile "../quoted.py"\n{evil}'),
        _cell(f"%%writefile '{target}/single_quoted.py'\n{evil}"),
        _cell(f'%%writefile "ngram.py" ../second_argument.py\n{evil}'),
        _cell(f"%%writefile ..\\backslash.py\n{evil}"),
        _cell(f"%%writefile ngram.py\u2028../line_separator.py\n{evil}"),
        _cell(f"%%writefile evil.sh\n#!/bin/sh\ntouch {target}/shell\n"),
        _cell(f"%%writefile sitecustomize.pth\nimport os; os.system('touch {target}/pth')\n"),
        _cell(f"!touch {target}/bang"),
        _cell(f"%%bash\ntouch {target}/bash"),
        _cell(f"import os\nos.system('touch {target}/plain')"),
        _correct_cell(ngram),
    ]
    return _dumps(_notebook(cells))


def file_tags_outside(ngram: str, marker: Path) -> bytes:
    """`file:` cell tags that name `..`, absolute and sub-folder paths, then the correct cell by tag."""
    evil = "raise SystemExit('CHEAT-FOUND: a refused cell was imported')\n"
    target = str(marker)
    tags = [
        "file:../escape.py",
        f"file:{target}/absolute.py",
        f"file:../../../../../../..{target}/dotdot.py",
        "file:sub/inner.py",
        "file:ngram.py/../../x.py",
        "file:..",
        "file:/",
        "file:",
        "file:ngram.py\nfile:../x.py",
    ]
    cells = [_cell(evil, tags=(tag,)) for tag in tags]
    cells.append(_cell(ngram, tags=("file:ngram.py",)))
    return _dumps(_notebook(cells))


def huge_string_beside_correct(ngram: str, marker: Path) -> bytes:
    """The correct cell beside a markdown cell of 40 MiB of escapes (`\\u0000` six bytes each), inside the
    64 MiB bound: read, not refused."""
    escapes = b'"' + b"\\u0000" * (40 * MIB // 6) + b'"'
    return _spliced(_notebook([_correct_cell(ngram), _cell("@@RAW@@", kind="markdown")]), escapes)


def many_source_fragments(ngram: str, marker: Path) -> bytes:
    """The correct code cell's source split into one-character strings (a list of about 5,000 of them), and
    a markdown cell of 500,000 empty strings: many values, under the documented bound."""
    fragments = list("%%writefile ngram.py\n" + ngram)
    cells = [_cell(fragments), _cell([""] * 500_000, kind="markdown")]  # type: ignore[arg-type]
    return _dumps(_notebook(cells))


def duplicate_keys_last_correct(ngram: str, marker: Path) -> bytes:
    """A code cell with two `source` keys, a stub first and the correct code last: Python's json (and so
    Jupyter) keeps the last, so a student running it sees the correct file written."""
    head = _dumps(_notebook([_correct_cell(ngram)]))
    stub = json.dumps("%%writefile ngram.py\ndef pad(sentence, n):\n    raise NotImplementedError\n")
    return head.replace(b'"source": ', b'"source": ' + stub.encode() + b', "source": ', 1)


def duplicate_cells_last_correct(ngram: str, marker: Path) -> bytes:
    """A notebook with two `cells` keys, an empty list first and the correct cell last."""
    head = _dumps(_notebook([_correct_cell(ngram)]))
    return head.replace(b'"cells": ', b'"cells": [], "cells": ', 1)


def many_helper_files(ngram: str, marker: Path) -> bytes:
    """The correct cell, then 3000 cells each writing a helper module of its own (docs: at most 2000 files)."""
    helpers = [_cell(f"%%writefile h{i}.py\nVALUE = {i}\n") for i in range(3000)]
    return _dumps(_notebook([_correct_cell(ngram), *helpers]))


def non_code_cells(ngram: str, marker: Path) -> bytes:
    """The correct code cell, then markdown and raw cells that begin `%%writefile ngram.py` or are tagged
    `file:ngram.py`, holding code that fails (docs: only code cells count)."""
    broken = "def pad(sentence, n):\n    raise SystemExit('CHEAT-FOUND: a markdown cell was graded')\n"
    cells = [
        _correct_cell(ngram),
        _cell("%%writefile ngram.py\n" + broken, kind="markdown"),
        _cell("%%writefile ngram.py\n" + broken, kind="raw"),
        _cell(broken, kind="markdown", tags=("file:ngram.py",)),
        _cell("# FILE: ngram.py\n" + broken, kind="raw"),
    ]
    return _dumps(_notebook(cells))


@dataclass(frozen=True)
class NotebookAttack:
    name: str
    build: Callable[[str, Path], bytes]
    refused: bool | None  # True: 0 with one line; False: the correct cell graded, full marks; None: either
    tries: str


ATTACKS = (
    NotebookAttack("correct", correct, False, "the control: a correct `%%writefile ngram.py` cell"),
    NotebookAttack("deep_nesting", deep_nesting, True, "metadata nested 100,000 levels deep"),
    NotebookAttack("million_tiny_cells", million_tiny_cells, True, "2.5 million empty cells, 7.5 MB"),
    NotebookAttack("over_64_mib", over_64_mib, True, "a 65 MiB markdown string"),
    NotebookAttack("invalid_utf8", invalid_utf8, True, "Latin-1 bytes in a code cell"),
    NotebookAttack("lone_surrogate", lone_surrogate, None, "`\\ud800` in the code cell: no UTF-8 spelling"),
    NotebookAttack("huge_integer", huge_integer, True, "a 100,000-digit integer (Python's int limit is 4300)"),
    NotebookAttack("nan_and_infinity", nan_and_infinity, True, "NaN and -Infinity literals (not JSON)"),
    NotebookAttack("truncated", truncated, True, "JSON cut in the middle of a string"),
    NotebookAttack("empty_file", empty_file, True, "zero bytes"),
    NotebookAttack("json_array", json_array, True, "valid JSON, a list of cells, not a notebook"),
    NotebookAttack("json_string", json_string, True, "valid JSON, one string, not a notebook"),
    NotebookAttack("cells_not_a_list", cells_not_a_list, True, "`cells` a mapping"),
    NotebookAttack("cells_of_wrong_types", cells_of_wrong_types, True, "cells that are numbers, null, mappings"),
    NotebookAttack("unknown_version", unknown_version, True, "nbformat 99"),
    NotebookAttack("utf16_encoded", utf16_encoded, True, "the notebook in UTF-16"),
    NotebookAttack("writes_outside", writes_outside, False, "`..`, absolute, `~`, `$HOME`, NUL, `!`, `%%bash`"),
    NotebookAttack("file_tags_outside", file_tags_outside, False, "`file:` tags with `..` and absolute paths"),
    NotebookAttack("huge_string_beside_correct", huge_string_beside_correct, False, "40 MiB of `\\u0000` escapes"),
    NotebookAttack("many_source_fragments", many_source_fragments, False, "500,000 one-value sources"),
    NotebookAttack("many_helper_files", many_helper_files, None, "3000 helper files (the bound is 2000)"),
    NotebookAttack("non_code_cells", non_code_cells, False, "markdown and raw cells that write ngram.py"),
    NotebookAttack("duplicate_keys_last_correct", duplicate_keys_last_correct, False, "two `source` keys"),
    NotebookAttack("duplicate_cells_last_correct", duplicate_cells_last_correct, False, "two `cells` keys"),
)


def main(out: Path, ngram_py: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for attack in ATTACKS:
        (out / f"{attack.name}.ipynb").write_bytes(attack.build(ngram_py.read_text(encoding="utf-8"), out / "marker"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
