"""A submitted Jupyter notebook: the files its cells write (the starter notebook is starter_notebook.py).

A notebook is graded as the files its code cells write, and no cell of it is
ever run: it is read as data (`notebook_reader`) and the text of some cells
becomes files, in the notebook's order, as IPython would have written them:

- a cell that begins with ``%%writefile FILE`` (or its alias ``%%file``)
  replaces FILE with the rest of the cell; ``%%writefile -a FILE`` (or
  ``--append``) adds the rest of the cell to its end;
- a cell whose first line is ``# FILE: NAME`` (the same options) is written
  whole, that line included, so the line numbers of feedback are the cell's;
- a cell tagged ``file:NAME`` is written whole, as ``# FILE: NAME`` would.

Any other cell (``!pip install``, a cell that raises, one that shells out)
is text the grader never looks at. The notebook is read within fixed memory
and time (`notebook_reader`): a notebook past its bounds is refused in one line. A FILE is taken as written (no variable
expansion): one of the assignment's files or a helper module ``NAME.py`` at
the top of the submission, nothing else (no folder, no absolute path, no
``..``); a cell that names anything else is left out and the student told why.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import notebook_reader
from .limits import MAX_SUBMISSION_BYTES, MAX_UNPACKED_FILES, UnreadableSubmission

MAGICS = ("%%writefile", "%%file")
MARKER = "# FILE:"
TAG = "file:"
APPEND_OPTIONS = ("-a", "--append")
HELPER_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")
# The cells left out that are said one by one; more are counted in one line.
MAX_REFUSED_SAID = 20


@dataclass
class WrittenFiles:
    """What a notebook's cells write: each file's text by name (in the order first written), and the cells left out."""

    files: dict[str, str] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)  # one line per cell left out, saying why


@dataclass
class _FileCell:
    """A cell that writes a file: how it named it, the name, whether it appends, and the text it writes."""

    how: str
    name: str
    append: bool
    text: str


def read(path: Path) -> Iterator[dict]:
    """The code cells of the notebook at `path`, one at a time; `UnreadableSubmission` when it cannot be one.

    Read by `notebook_reader` within fixed memory and time (never as a whole
    JSON tree), and without validation against the schema: a notebook an
    editor saved with a stray field still has its cells, and only the cells'
    type, source and tags are used. The file's size and encoding are checked
    here; its structure as the cells are read.
    """
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            raise UnreadableSubmission(f"{path.name} is larger than {MAX_SUBMISSION_BYTES // 2**20} MiB")
        data = path.read_bytes()
        notebook_reader.check_utf8(data)
    except notebook_reader.NotebookRefused as exc:
        raise UnreadableSubmission(f"{path.name} is not a Jupyter notebook: {exc}") from None
    except OSError as exc:
        raise UnreadableSubmission(f"{path.name} could not be read ({exc.strerror or type(exc).__name__})") from None
    return _told(path.name, notebook_reader.cells(data))


def _told(name: str, cells: Iterator[dict]) -> Iterator[dict]:
    try:
        yield from cells
    except notebook_reader.NotebookRefused as exc:
        raise UnreadableSubmission(f"{name} is not a Jupyter notebook the grader can read ({exc})") from None


def written_files(node, expected: tuple[str, ...]) -> WrittenFiles:
    """What the code cells of notebook `node` write, in order; `expected` are the assignment's file names.

    `node` is a notebook as nbformat gives it, or its cells as `read` gives them (one at a time)."""
    out = WrittenFiles()
    total = 0
    refused = 0
    cells = node.get("cells", []) if isinstance(node, dict) else node
    for number, cell in enumerate(cells, start=1):
        try:
            found = _file_cell(cell)
        except ValueError as exc:
            refused += 1
            _refuse(out, refused, f"cell {number} was not graded: {exc}")
            continue
        if found is None:
            continue
        name, why = valid_name(found.name, expected)
        if why:
            refused += 1
            _refuse(out, refused, f"cell {number} ({found.how}) was not graded: {why}")
            continue
        if name not in out.files and len(out.files) >= MAX_UNPACKED_FILES:
            raise UnreadableSubmission(f"the notebook's cells write more than {MAX_UNPACKED_FILES} files")
        before = out.files.get(name, "")
        text = before + found.text if found.append else found.text
        total += len(text) - len(before)
        if total > MAX_SUBMISSION_BYTES:
            raise UnreadableSubmission(f"the notebook's cells write more than {MAX_SUBMISSION_BYTES // 2**20} MiB")
        out.files[name] = text
    if refused > MAX_REFUSED_SAID:
        out.refused.append(f"{refused - MAX_REFUSED_SAID} more cells that name a file were not graded")
    return out


def _refuse(out: WrittenFiles, count: int, line: str) -> None:
    """Say why a cell was left out, for the first `MAX_REFUSED_SAID` of them (the rest are counted)."""
    if count <= MAX_REFUSED_SAID:
        out.refused.append(line)


def _file_cell(cell) -> _FileCell | None:
    """The file a cell writes, or None for a cell that writes none; ValueError for one that names it wrongly."""
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return None
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    if not isinstance(source, str):
        return None
    lines = source.splitlines(keepends=True)
    while lines and not lines[0].strip():  # IPython drops a cell's leading blank lines before its magic
        lines.pop(0)
    first = lines[0].rstrip() if lines else ""
    magic = first.split(maxsplit=1)[0] if first else ""
    if magic in MAGICS:
        name, append = _arguments(first[len(magic) :], first)
        return _FileCell(_quoted(first), name, append, _ended("".join(lines[1:])))
    if first.startswith(MARKER):
        name, append = _arguments(first[len(MARKER) :], first)
        return _FileCell(_quoted(first), name, append, _ended("".join(lines)))
    metadata = cell.get("metadata")
    tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
    named = [t[len(TAG) :] for t in tags if isinstance(t, str) and t.startswith(TAG)] if isinstance(tags, list) else []
    if len(named) > 1:
        raise ValueError(f"it is tagged for {len(named)} files ({_quoted(', '.join(named))}): tag it for one")
    if named:
        return _FileCell(f"tagged {_quoted(TAG + named[0])}", named[0], False, _ended("".join(lines)))
    return None


def _quoted(line: str, most: int = 100) -> str:
    """`line` in backticks as feedback quotes it: shortened, for a line can be any length."""
    return f"`{line if len(line) <= most else line[:most] + '...'}`"


def _arguments(text: str, line: str) -> tuple[str, bool]:
    """(file name, append) from what follows `%%writefile` or `# FILE:`, split as IPython splits it."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"{_quoted(line)} cannot be read ({exc})") from None
    append = any(w in APPEND_OPTIONS for w in words)
    words = [w for w in words if w not in APPEND_OPTIONS]
    unknown = [w for w in words if w.startswith("-")]
    if unknown:
        raise ValueError(f"{_quoted(line)}: unknown option {unknown[0][:20]} (only -a, to append)")
    if len(words) != 1:
        raise ValueError(f"{_quoted(line)} names {'no file' if not words else f'{len(words)} files'}: name one")
    return words[0], append


def _ended(text: str) -> str:
    """The text as IPython writes a cell: ending with a line break unless empty."""
    return text if not text or text.endswith("\n") else text + "\n"


def valid_name(name: str, expected: tuple[str, ...]) -> tuple[str, str]:
    """(the file name, "") where a cell may write `name`, else (name, why not).

    A cell writes into the submission folder only: one of the `expected`
    files, or a helper module ``NAME.py`` beside them, as a folder may hold.
    """
    shown = name if len(name) <= 80 else name[:80] + "..."  # said in the results: any length could be given
    plain = name
    while plain.startswith("./"):
        plain = plain[2:]
    named = ", ".join(expected)
    if plain.startswith(("/", "~")) or re.match(r"[A-Za-z]:[\\/]", plain):
        base = re.split(r"[\\/]", plain)[-1]
        hint = f" (write `%%writefile {base}`)" if base in expected else ""
        return name, f"{shown} is an absolute path; a cell writes a file of the submission folder only{hint}"
    parts = re.split(r"[\\/]", plain)
    if ".." in parts:
        return name, f"{shown} is outside the submission folder"
    if len(parts) > 1:
        return name, f"{shown} is in a sub-folder; a cell writes a file at the top of the submission ({named})"
    if plain in expected or HELPER_MODULE.fullmatch(plain):
        return plain, ""
    return name, f"{shown} is neither a file of the assignment ({named}) nor a helper module (NAME.py)"


def unpack(path: Path, into: Path, expected: tuple[str, ...]) -> list[str]:
    """Write the files of the notebook at `path` into the folder `into` (made if missing); return what to tell.

    The lines say which files were written and which cells were left out, and
    name each expected file that neither the notebook nor the folder already
    holds, with how a cell provides it. Raises `UnreadableSubmission` for a
    notebook that cannot be read, or whose files are too many or too large.
    """
    written = written_files(read(path), expected)
    into.mkdir(parents=True, exist_ok=True)
    for name, text in written.files.items():
        target = into / name
        if target.is_dir():  # a folder of that name beside the notebook: the notebook's file is what is graded
            shutil.rmtree(target)
        target.write_text(text, encoding="utf-8")
    refused = [f"{path.name}, {line}" for line in written.refused]
    missing = [f for f in expected if not (into / f).is_file()]
    if not any(f in written.files for f in expected):
        others = f" (its cells write {', '.join(written.files)})" if written.files else ""
        return [
            f"{path.name} writes none of the assignment's files{others}: expected {', '.join(expected)}, each from "
            f"a code cell that begins with `%%writefile FILE` (e.g. `%%writefile {expected[0]}`) or whose first "
            f"line is `# FILE: {expected[0]}`; no cell of the notebook is run.",
            *refused,
        ]
    line = f"{path.name}: graded the files its cells write ({', '.join(written.files)}); no cell of it was run."
    if missing:
        line += (
            f" {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} written by no cell: a code cell that "
            f"begins with `%%writefile {missing[0]}` provides {'it' if len(missing) == 1 else 'each'}."
        )
    return [line, *refused]


# --- the starter notebook -------------------------------------------------------------------------
