"""Single-point mutants of a Python file, to measure what a grader catches.  ``make_mutants(source, filename)``
returns every mutant that one operator makes at one place in the file. ``lmgrade mutants`` grades each one as
a submission; a mutant that keeps full marks is a change to the reference no check notices.  Text spans, not
ast.unparse     A mutant is the original text with one range replaced. The range lies     within the span of
one AST node (lineno/col_offset to     end_lineno/end_col_offset, sliced as ast.get_source_segment slices it)
and     is as small as the operator allows: the ``/`` of ``a / b``, the ``+=`` of     ``dW += g``, one bound
of a slice. Everything else, the author's spacing,     brackets, comments and quotes, stays as it was, so a
change reads as an     edit of the line the author wrote. Printing the mutated tree back with     ast.unparse
would drop the comments and reformat every line.  Checked, deduplicated, ordered     A candidate must parse
and its tree (ast.dump, positions ignored) must     differ from the original's and from every mutant kept
before it. When two     operators make the same tree (``const`` and ``swap_func`` both turn     ``axis=0``
into ``axis=1``), the one listed first in OPERATORS keeps it:     the more specific name says more about the
bug. Mutants come in the order     of their place in the file, then of OPERATORS.  Identity that survives
edits     ``Mutant.key`` is the file, the enclosing function, the changed line(s)     before and after
(whitespace collapsed) and an occurrence number for     repeats. It has no line number, so a mutant recorded
once is recognised     after the file changes elsewhere.  Never mutated     Docstrings and every string
(f-strings included), imports, annotations,     decorators, ``raise`` statements (their messages), assert
messages and the     ``if __name__ == "__main__":`` block. The condition of an ``if`` whose     body raises is
mutated: that is how a grader's checks of bad arguments     are measured.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from .mutation_operators import _OPERATORS
from .mutation_source import _collapse, _Edit, _is_string, _Module, _Text

MODULE = "<module>"


@dataclass(frozen=True)
class Mutant:
    """One change at one place of one file; `source` is the whole mutated file."""

    file: str
    function: str
    operator: str
    line: int
    before: str
    after: str
    source: str = field(repr=False)
    occurrence: int = 0

    @property
    def key(self) -> str:
        """The mutant's name across edits elsewhere in the file.

        Tab-separated: whitespace-collapsed text never holds a tab, so the key
        splits back into its parts unambiguously.
        """
        return "\t".join((self.file, self.function, self.before, self.after, str(self.occurrence)))

    def diff(self) -> str:
        return f"{self.file}:{self.line} {self.function}: `{self.before}` -> `{self.after}`"


def make_mutants(source: str, filename: str) -> list[Mutant]:
    """Every single-point mutant of `source`, in a deterministic order.

    Raises ValueError, naming `filename`, when `source` does not parse.
    """
    tree = _parse(source, filename)
    module = _Module.of(tree, _Text(source))
    # Sorted by operator first, so that of two candidates making the same tree
    # the earlier operator's is the one kept.
    candidates = sorted(_candidates(tree, module), key=lambda c: c.rank)
    seen = {ast.dump(tree)}
    kept = []
    for candidate in candidates:
        mutated = module.text.apply(candidate.edit)
        dump = _dump_if_parses(mutated)
        if dump is not None and dump not in seen:
            seen.add(dump)
            kept.append((candidate, mutated))
    kept.sort(key=lambda found: (found[0].edit.start, found[0].rank, found[0].index))
    return _numbered([_mutant(candidate, mutated, module.text, filename) for candidate, mutated in kept])


def _parse(source: str, filename: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # the file's own warnings (escape sequences, ...) are not ours to show
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=filename)
    except SyntaxError as error:
        raise ValueError(f"cannot make mutants of {filename}: line {error.lineno}: {error.msg}") from error
    except ValueError as error:  # null bytes, on Python 3.10 and 3.11
        raise ValueError(f"cannot make mutants of {filename}: {error}") from error


def _dump_if_parses(source: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


def _mutant(candidate: _Candidate, mutated: str, text: _Text, filename: str) -> Mutant:
    edit = candidate.edit
    first, last = text.lines_of(edit)
    return Mutant(
        file=filename,
        function=candidate.function,
        operator=candidate.operator,
        line=text.line_number(edit.start),
        before=_collapse(text.source[first:last]),
        after=_collapse(text.source[first : edit.start] + edit.text + text.source[edit.end : last]),
        source=mutated,
    )


def _numbered(mutants: list[Mutant]) -> list[Mutant]:
    """Tell apart the mutants that read the same, e.g. of a line written twice in one function."""
    counts: dict[tuple[str, str, str], int] = {}
    numbered = []
    for mutant in mutants:
        reading = (mutant.function, mutant.before, mutant.after)
        numbered.append(replace(mutant, occurrence=counts.get(reading, 0)))
        counts[reading] = counts.get(reading, 0) + 1
    return numbered


# Fields holding annotations and decorators: never mutated, whatever they contain.
_UNMUTATED_FIELDS = frozenset({"annotation", "returns", "decorator_list", "type_params"})


_UNMUTATED_STATEMENTS = tuple(
    kind for kind in (ast.Import, ast.ImportFrom, ast.Raise, getattr(ast, "TypeAlias", None)) if kind is not None
)


@dataclass(frozen=True)
class _Candidate:
    rank: int  # the operator's place in OPERATORS
    index: int  # the order of generation, to break ties deterministically
    operator: str
    function: str
    edit: _Edit


def _candidates(tree: ast.Module, module: _Module) -> Iterator[_Candidate]:
    index = 0
    for node, function in _mutable_nodes(tree, MODULE):
        for rank, (operator, mutate) in enumerate(_OPERATORS.items()):
            for edit in mutate(node, module):
                yield _Candidate(rank, index, operator, function, edit)
                index += 1


def _mutable_nodes(node: ast.AST, function: str) -> Iterator[tuple[ast.AST, str]]:
    """Every node a mutant may touch, with the qualified name of the def (or class) it is in."""
    if _never_mutated(node):
        return
    yield node, function
    inner = _qualified_name(node, function)
    for name, value in ast.iter_fields(node):
        if name in _UNMUTATED_FIELDS or (isinstance(node, ast.Assert) and name == "msg"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from _mutable_nodes(child, inner)


def _never_mutated(node: ast.AST) -> bool:
    if isinstance(node, _UNMUTATED_STATEMENTS) or _is_string(node) or _is_main_guard(node):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)  # a docstring, or `...`


def _qualified_name(node: ast.AST, function: str) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name if function == MODULE else f"{function}.{node.name}"
    return function


def _is_main_guard(node: ast.AST) -> bool:
    if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
        return False
    sides = [node.test.left, node.test.comparators[0]]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    strings = {side.value for side in sides if isinstance(side, ast.Constant)}
    return isinstance(node.test.ops[0], ast.Eq) and names == {"__name__"} and strings == {"__main__"}
