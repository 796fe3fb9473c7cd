"""Near-duplicate submissions: pairs whose code is mostly the same once names, literals and layout are set aside.

Winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for
document fingerprinting", 2003; the algorithm of MOSS) over Python tokens:

- each graded file is parsed and written out again with the rewrites that
  change nothing undone (`syntax_tree`: empty starred arguments such as
  ``f(a, *())`` and no-op statements such as ``pass`` removed), then read
  with the standard library's `tokenize`; comments,
  docstrings, blank lines and line breaks inside brackets are dropped, every
  identifier becomes one token, every number another and every string a
  third; a trailing comma before a closing bracket and parentheses that only
  group (not a call's) are dropped. Renaming variables, re-indenting,
  re-wrapping lines, rewriting comments or running a formatter leaves the
  same tokens; statement ends and block starts and ends stay, so the
  structure of the code still counts;
- every run of `K` tokens is hashed, and in every window of `WINDOW`
  consecutive hashes the smallest is kept: the submission's fingerprints. Two
  submissions that share a run of at least `K + WINDOW - 1` tokens are
  guaranteed to share a fingerprint, wherever it lies in each file (moving
  functions around hides nothing);
- every run of tokens the generated stub holds (its signatures, docstrings
  and constants, which every submission keeps) is discounted: its hashes are
  no submission's fingerprints;
- a pair's similarity is the share of the smaller submission's fingerprints
  that the other holds too: a copy padded with code of its own is still a copy.

Pairs at or above `THRESHOLD` with at least `MIN_SHARED` fingerprints in
common are listed. The threshold is measured (benchmarks/near_duplicates.py,
docs/class-report.md): over a class of 30 per assignment, copies disguised
by renaming, reformatting, reordering, padding or taking half of the
functions share at least 72% with their original, independent correct
solutions (and half of one against another) at most 46%; 60% is between.
Copies rewritten mechanically (empty starred arguments on every call,
``pass`` after every statement, both) are measured too
(benchmarks/near_duplicates.py, docs/benchmarks.md).
A listing is a hint for a person to look, never a verdict, and never
changes a score. A submission whose files cannot be read or compared is left
out of the comparison, never stopping it.
"""

from __future__ import annotations

import hashlib
import io
import keyword
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...submissions.submitted_files import locate
from .graded import Graded
from .layout import SubmissionFolder
from .syntax_tree import simplified_source

K = 12  # tokens per hashed run: shorter runs shared by chance (`for V in range(len(V)):`) are never seen
WINDOW = 8  # a shared run of K + WINDOW - 1 = 19 tokens is always seen
THRESHOLD = 0.6  # of the smaller submission's fingerprints, found in the other: measured, see the module doc
MIN_SHARED = 10  # fingerprints in common: a nearly untouched stub shares too little to say anything

IDENTIFIER, NUMBER, STRING = "V", "N", "S"
STATEMENT_END, BLOCK_START, BLOCK_END = "NEWLINE", "INDENT", "DEDENT"  # no operator or keyword is spelt so
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_CLOSING = {")", "]", "}"}
_CALLABLE_ENDS = {IDENTIFIER, ")", "]"}  # what the "(" of a call follows
# Python 3.12 splits an f-string into tokens of its own; before, it is one STRING.
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class NearDuplicate:
    first: str  # submission keys, in the layout's order
    second: str
    similarity: float  # shared fingerprints over the smaller submission's
    shared: int  # fingerprints in common


def _raw_tokens(source: str) -> Iterator[tokenize.TokenInfo]:
    """`tokenize`'s tokens of `source`, up to the first place it cannot read (a file with a syntax error
    still has the fingerprints of what comes before it)."""
    try:
        yield from tokenize.generate_tokens(io.StringIO(source).readline)
    except (tokenize.TokenError, SyntaxError):
        return


def normalised_tokens(source: str) -> list[str]:
    """The tokens of Python `source` that winnowing hashes: no-op rewrites undone (`syntax_tree`), names,
    literals and layout set aside."""
    simplified = simplified_source(source)
    return _tokens(source if simplified is None else simplified)


def _tokens(source: str) -> list[str]:
    out: list[str] = []
    brackets: list[bool] = []  # for each open bracket, whether it is left out
    in_fstring = 0
    for token in _raw_tokens(source):
        kind, text = token.type, token.string
        if _FSTRING_START is not None and kind in (_FSTRING_START, _FSTRING_END):
            in_fstring += 1 if kind == _FSTRING_START else -1
            if kind == _FSTRING_START and in_fstring == 1:
                out.append(STRING)
            continue
        if in_fstring or kind in _SKIPPED:
            continue
        if kind == tokenize.NAME:
            out.append(text if keyword.iskeyword(text) else IDENTIFIER)
        elif kind == tokenize.NUMBER:
            out.append(NUMBER)
        elif kind == tokenize.STRING:
            if out and out[-1] == STRING:  # "a" "b": one string, however it is split over lines
                continue
            out.append(STRING)
        elif kind == tokenize.NEWLINE or text == ";":
            _end_statement(out)
        elif kind == tokenize.INDENT:
            out.append(BLOCK_START)
        elif kind == tokenize.DEDENT:
            out.append(BLOCK_END)
        elif kind == tokenize.OP:
            if text in _CLOSING and out and out[-1] == ",":  # a formatter's trailing comma
                out.pop()
            if text in "([{":
                # Parentheses that group (not a call's) are a formatter's too: left out, with their closing one.
                grouping = text == "(" and not (out and (out[-1] in _CALLABLE_ENDS))
                brackets.append(grouping)
                if grouping:
                    continue
            elif text in _CLOSING and brackets and brackets.pop():
                continue
            out.append(text)
        # ERRORTOKEN and the like: nothing a formatter or a renaming changes
    return out


def _end_statement(out: list[str]) -> None:
    """End a statement; one that was only a string (a docstring) is dropped with it."""
    if out and out[-1] == STRING and (len(out) == 1 or out[-2] in (STATEMENT_END, BLOCK_START, BLOCK_END)):
        out.pop()
        return
    if out and out[-1] != STATEMENT_END:
        out.append(STATEMENT_END)


def _hash(run: Iterable[str]) -> int:
    # Not Python's hash(): that one changes between processes, and the report must not.
    return int.from_bytes(hashlib.blake2b("\x1f".join(run).encode(), digest_size=8).digest(), "big")


def kgram_hashes(tokens: list[str], k: int = K) -> list[int]:
    """The hash of every run of `k` consecutive tokens, in order."""
    return [_hash(tokens[i : i + k]) for i in range(len(tokens) - k + 1)]


def winnow(hashes: list[int], window: int = WINDOW) -> set[int]:
    """The smallest hash of every `window` consecutive ones (a file shorter than one window: its smallest)."""
    if len(hashes) <= window:
        return {min(hashes)} if hashes else set()
    return {min(hashes[start : start + window]) for start in range(len(hashes) - window + 1)}


def fingerprints(sources: Iterable[str], discounted: frozenset[int] = frozenset()) -> frozenset[int]:
    """The winnowed fingerprints of some files' texts, less those in `discounted` (the stub's runs)."""
    found: set[int] = set()
    for source in sources:
        found |= winnow(kgram_hashes(normalised_tokens(source)))
    return frozenset(found - discounted)


def stub_runs(stub: Iterable[str]) -> frozenset[int]:
    """The hash of every run of the stub's files: each is discounted, not only the stub's fingerprints."""
    return frozenset(h for source in stub for h in kgram_hashes(normalised_tokens(source)))


def near_duplicates(
    prints: Mapping[str, frozenset[int]], threshold: float = THRESHOLD, min_shared: int = MIN_SHARED
) -> list[NearDuplicate]:
    """Every pair of submissions ({key: fingerprints}, in the layout's order) whose similarity reaches
    `threshold` with at least `min_shared` fingerprints in common; most similar first."""
    # Every pair, set against set: a time that grows with the class's size squared and nothing else (an
    # index from fingerprint to submissions is slower, not faster, where many share an idiom).
    keys = list(prints)
    pairs = []
    for i, first in enumerate(keys):
        for second in keys[i + 1 :]:
            if not (prints[first] and prints[second]):
                continue
            count = len(prints[first] & prints[second])
            similarity = count / min(len(prints[first]), len(prints[second]))
            if count >= min_shared and similarity >= threshold:
                pairs.append(NearDuplicate(first, second, similarity, count))
    order = {key: i for i, key in enumerate(keys)}
    return sorted(pairs, key=lambda p: (-p.similarity, order[p.first], order[p.second]))


MAX_COMPARED_BYTES = 1 << 20  # of each file: a source file is far smaller; a larger one is compared in part


def submission_sources(folder: Path, files: tuple[str, ...]) -> list[str]:
    """The texts of the assignment's `files` in a submission, found where grading finds them (none: [])."""
    try:
        where, _ = locate(folder, files)
    except OSError:  # a folder that cannot be read: nothing of it to compare
        return []
    texts = []
    for name in files:
        try:
            with open(where / name, "rb") as f:
                texts.append(f.read(MAX_COMPARED_BYTES).decode("utf-8", errors="replace"))
        except OSError:  # missing or unreadable: nothing of it to compare
            continue
    return texts


def _submission_prints(folder: Path, files: tuple[str, ...], discounted: frozenset[int]) -> frozenset[int]:
    """A submission's fingerprints; none where anything about it fails (its row says so where it matters)."""
    try:
        return fingerprints(submission_sources(folder, files), discounted)
    except Exception:
        return frozenset()


def class_near_duplicates(
    rows: Iterable[tuple[SubmissionFolder, Graded]],
    files: tuple[str, ...],
    stub: Iterable[str],
    threshold: float = THRESHOLD,
) -> list[NearDuplicate]:
    """The near-duplicate pairs of a regraded class: each submission's graded `files` against every other's,
    the `stub`'s texts discounted. Pairs of byte-identical submissions are left to
    `insights.identical_groups`, which lists them already."""
    rows = list(rows)
    discounted = stub_runs(stub)
    prints = {s.key: _submission_prints(s.folder, files, discounted) for s, _ in rows}
    hashes = {s.key: g.files_hash for s, g in rows}
    return [
        pair
        for pair in near_duplicates(prints, threshold)
        if not (hashes[pair.first] and hashes[pair.first] == hashes[pair.second])
    ]
