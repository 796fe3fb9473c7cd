"""A notebook's cells read within fixed memory and time, never as a whole JSON tree.

``json.loads``, and nbformat on top of it, make every value of a document a
Python object: a 4 MiB notebook padded with 1.4 million empty JSON objects
took 743 MiB and 25 s to read, and the 64 MiB an upload may have would need
about 11 GiB. This reader walks the document's tokens once, in order, and
keeps only what grading uses: each code cell's source (``input`` in version
3) and its ``file:`` tags. Everything else (outputs, attachments,
other metadata) is skipped token by token and never built. Cells come one
at a time (`cells`), so a notebook of many cells never holds them all.

Bounds: at most `MAX_TOKENS` tokens and `MAX_DEPTH` levels of nesting, so the
time is bounded whatever the size; what is kept is at most the bytes of one
cell's source and tags beside the document's own bytes, so a read costs
about twice the upload's size, four times for text outside the BMP. A
notebook past a bound is refused in one line (`NotebookRefused`).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator

# Far above any real notebook's (a thousand cells with long outputs: a few hundred thousand), and read in
# about a second here.
MAX_TOKENS = 2_000_000
MAX_DEPTH = 64
# The most tags of a cell kept: a cell is tagged for one file, and more are said as more.
MAX_TAGS = 3
VERSIONS = (3, 4)
TOO_MANY = "it holds more than {:,} JSON values and marks: clear its outputs and submit it again"

# One token after any whitespace: punctuation (group 2), a number or literal (3), NaN and Infinity among
# them as Python's json writes them. A string (1) is found by `_string_end`: a regular expression's repeated
# group keeps memory for every escape it passes (about 140 bytes each), where a string of millions of
# escapes must cost nothing but its own bytes.
_TOKEN = re.compile(rb'[ \t\n\r]*(?:(")|([{}\[\]:,])|(-?[0-9][0-9.eE+-]*|true|false|null|NaN|-?Infinity))')
_SPACE = re.compile(rb"[ \t\n\r]*")
_STRING, _PUNCT, _LITERAL = 1, 2, 3
_BACKSLASH = 0x5C


def _string_end(data: bytes, quote: int) -> int:
    """Where the JSON string whose opening quote is at `quote` ends (just past its closing quote): the first
    quote after it with an even number of backslashes before it."""
    pos = quote + 1
    while True:
        end = data.find(b'"', pos)
        if end < 0:
            raise NotebookRefused("it ends before its JSON does")
        before = end - 1
        while before > quote and data[before] == _BACKSLASH:
            before -= 1
        if (end - 1 - before) % 2 == 0:
            return end + 1
        pos = end + 1


def _match(data: bytes, pos: int) -> tuple[int, int, int] | None:
    """The token after `pos`: its kind, where it starts and where it ends; None where none is there."""
    match = _TOKEN.match(data, pos)
    if match is None:
        return None
    kind = match.lastindex
    start = match.start(kind)
    return kind, start, _string_end(data, start) if kind == _STRING else match.end()


_OPEN, _CLOSE = b"{[", b"}]"


class NotebookRefused(ValueError):
    """A notebook the reader does not read: not JSON, not a notebook, or past a bound (the message says which)."""


def check_utf8(data: bytes, chunk: int = 2**20) -> None:
    """`NotebookRefused` where `data` is not UTF-8 text; decoded a chunk at a time, nothing of it kept."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), chunk):
            decoder.decode(data[start : start + chunk])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise NotebookRefused("it is not UTF-8 text") from None


class _Tokens:
    def __init__(self, data: bytes):
        self.data, self.pos, self.count = data, 0, 0

    def next(self) -> tuple[int, bytes]:
        """The next token: its kind and, for a string or punctuation, its bytes (a literal's too)."""
        found = _match(self.data, self.pos)
        if found is None:
            end = _SPACE.match(self.data, self.pos).end()
            raise NotebookRefused("it is not JSON" if end < len(self.data) else "it ends before its JSON does")
        self.count += 1
        if self.count > MAX_TOKENS:
            raise NotebookRefused(TOO_MANY.format(MAX_TOKENS))
        kind, start, self.pos = found
        return kind, self.data[start : self.pos]

    def skip_from(self, kind: int, token: bytes) -> None:
        """Skip the value that begins with `token`, without building it (only its brackets are matched)."""
        if kind != _PUNCT or token not in (b"{", b"["):
            if kind == _PUNCT:
                raise NotebookRefused("it is not JSON")
            return
        opened = bytearray(token)
        data = self.data
        while opened:
            found = _match(data, self.pos)
            if found is None:
                self.next()  # says why
            self.count += 1
            if self.count > MAX_TOKENS:
                raise NotebookRefused(TOO_MANY.format(MAX_TOKENS))
            kind, _, self.pos = found
            if kind == _PUNCT:
                mark = data[self.pos - 1]
                if mark in _OPEN:
                    opened.append(mark)
                    if len(opened) > MAX_DEPTH:
                        raise NotebookRefused(f"it is nested deeper than {MAX_DEPTH} levels")
                elif mark in _CLOSE:
                    if opened.pop() != (ord("{") if mark == ord("}") else ord("[")):
                        raise NotebookRefused("it is not JSON (a bracket closed by the other kind)")

    def expect(self, token: bytes) -> None:
        if self.next()[1] != token:
            raise NotebookRefused("it is not JSON")

    def keys(self) -> Iterator[str]:
        """After an object's `{`: each key, the tokenizer then at its value, which the caller reads or skips."""
        kind, token = self.next()
        if token == b"}":
            return
        while True:
            if kind != _STRING:
                raise NotebookRefused("it is not JSON (an object key that is not a string)")
            key = text(token)
            self.expect(b":")
            yield key
            kind, token = self.next()
            if token == b"}":
                return
            if token != b",":
                raise NotebookRefused("it is not JSON")
            kind, token = self.next()

    def items(self) -> Iterator[tuple[int, bytes]]:
        """After an array's `[`: the first token of each item, which the caller reads or skips from."""
        kind, token = self.next()
        if token == b"]":
            return
        while True:
            yield kind, token
            kind, token = self.next()
            if token == b"]":
                return
            if token != b",":
                raise NotebookRefused("it is not JSON")
            kind, token = self.next()

    def end(self) -> None:
        if _SPACE.match(self.data, self.pos).end() != len(self.data):
            raise NotebookRefused("it is not JSON (more after the notebook)")


def text(token: bytes) -> str:
    """A JSON string token as text (a lone surrogate, which no file can hold, as U+FFFD)."""
    body = token[1:-1]
    if b"\\" not in body:
        return body.decode("utf-8", "replace")
    try:
        value = json.loads(token)
    except ValueError:
        raise NotebookRefused("it is not JSON (a string's escape)") from None
    return value.encode("utf-8", "replace").decode("utf-8")


def _source(tokens: _Tokens, kind: int, token: bytes) -> str | None:
    """A cell's source: a string, or a list of strings joined (decoded once, as UTF-8 bytes gathered)."""
    if kind == _STRING:
        return text(token)
    if token != b"[":
        tokens.skip_from(kind, token)
        return None
    gathered = bytearray()
    for kind, token in tokens.items():
        if kind != _STRING:
            tokens.skip_from(kind, token)
        elif b"\\" in token:
            gathered += text(token).encode("utf-8")
        else:
            gathered += token[1:-1]
    return gathered.decode("utf-8", "replace")


def _tags(tokens: _Tokens) -> list[str]:
    """After a metadata object's `{`: its tags (strings only, at most `MAX_TAGS` of those naming a file)."""
    tags: list[str] = []
    for key in tokens.keys():
        kind, token = tokens.next()
        if key != "tags" or token != b"[":
            tokens.skip_from(kind, token)
            continue
        for kind, token in tokens.items():
            if kind == _STRING and len(tags) < MAX_TAGS:
                tag = text(token)
                if tag.startswith("file:"):
                    tags.append(tag)
            else:
                tokens.skip_from(kind, token)
    return tags


def _cell(tokens: _Tokens, source_key: str) -> dict:
    """After a cell's `{`: the cell as nbformat gives it, with only its type, source and file tags (`OTHER` for a
    cell that is not code)."""
    cell: dict = {}
    for key in tokens.keys():
        kind, token = tokens.next()
        if key == "cell_type" and kind == _STRING:
            cell["cell_type"] = text(token)
        elif key == source_key:  # kept until the cell's end: its type may come after it
            cell["source"] = _source(tokens, kind, token)
        elif key == "metadata" and token == b"{":
            cell["metadata"] = {"tags": _tags(tokens)}
        else:
            tokens.skip_from(kind, token)
    return cell if cell.get("cell_type") == "code" else OTHER


# What a cell that is not code is given as, one object for all: it only keeps the cells' numbering.
OTHER: dict = {"cell_type": "other"}


def _cell_list(tokens: _Tokens, source_key: str, kind: int, token: bytes) -> Iterator[dict]:
    """Every item of the cells' list that begins with `token`: a code cell, or `OTHER`."""
    if token != b"[":
        raise NotebookRefused("its cells are not a list")
    for kind, token in tokens.items():
        if token == b"{":
            yield _cell(tokens, source_key)
        else:
            tokens.skip_from(kind, token)
            yield OTHER


def cells(data: bytes) -> Iterator[dict]:
    """The cells of the notebook `data`, in order: a code cell as ``{"cell_type", "source", "metadata":
    {"tags"}}``, any other as `OTHER`.

    Version 4 keeps its cells in ``cells``, version 3 in ``worksheets[i].cells`` with the code in ``input``.
    Raises `NotebookRefused` (lazily, as the cells are read) for anything else.
    """
    tokens = _Tokens(data)
    if tokens.next()[1] != b"{":
        raise NotebookRefused("it is not a JSON object")
    version, found = None, False
    for key in tokens.keys():
        kind, token = tokens.next()
        if key == "nbformat" and kind == _LITERAL:
            version = token
        elif key == "cells":
            found = True
            yield from _cell_list(tokens, "source", kind, token)
        elif key == "worksheets" and token == b"[":
            found = True
            for kind, token in tokens.items():
                if token != b"{":
                    tokens.skip_from(kind, token)
                    continue
                for inner in tokens.keys():
                    if inner == "cells":
                        yield from _cell_list(tokens, "input", *tokens.next())
                    else:
                        tokens.skip_from(*tokens.next())
        else:
            tokens.skip_from(kind, token)
    tokens.end()
    if version is None or not version.isdigit() or int(version) not in VERSIONS:
        shown = "none" if version is None else version[:10].decode("ascii", "replace")
        raise NotebookRefused(f"its nbformat version is {shown}, not one the grader reads (3 or 4)")
    if not found:
        raise NotebookRefused("it has no list of cells")
