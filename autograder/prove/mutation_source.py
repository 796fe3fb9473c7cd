"""The reference's text as mutation edits it: tokens, edits, and the module they are made in."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass


def _collapse(text: str) -> str:
    return " ".join(text.split())


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as ast.get_source_segment: a form feed is no line break


_COMMENT = re.compile(r"#[^\r\n]*")


@dataclass(frozen=True)
class _Edit:
    """source[start:end] replaced by text; start == end inserts."""

    start: int
    end: int
    text: str


class _Text:
    """The source, with AST positions (1-based lines, UTF-8 byte columns) turned into string indices."""

    def __init__(self, source: str):
        self.source = source
        self._line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(source)]

    def index(self, lineno: int, col_offset: int) -> int:
        start = self._line_starts[lineno - 1]
        # The column counts bytes, so at least that many characters hold the prefix.
        prefix = self.source[start : start + col_offset].encode("utf-8")[:col_offset].decode("utf-8")
        return start + len(prefix)

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.index(node.lineno, node.col_offset), self.index(node.end_lineno, node.end_col_offset)

    def line_number(self, index: int) -> int:
        return bisect.bisect_right(self._line_starts, index)

    def lines_of(self, edit: _Edit) -> tuple[int, int]:
        """The whole lines an edit touches, without the last line break."""
        first = self._line_starts[self.line_number(edit.start) - 1]
        line_break = _LINE_BREAK.search(self.source, edit.end)
        return first, line_break.start() if line_break else len(self.source)

    def find(self, start: int, end: int, pattern: str) -> tuple[int, int] | None:
        """Where `pattern` first matches in source[start:end], comments left out.

        Called on the gap between sibling nodes, where only brackets, spaces,
        comments and an operator can be: no string, so every # starts a comment.
        """
        gap = _COMMENT.sub(lambda m: " " * len(m.group()), self.source[start:end])
        found = re.search(pattern, gap)
        return (start + found.start(), start + found.end()) if found else None

    def between(self, left: ast.AST, right: ast.AST, pattern: str) -> tuple[int, int] | None:
        return self.find(self.span(left)[1], self.span(right)[0], pattern)

    def apply(self, edit: _Edit) -> str:
        return self.source[: edit.start] + edit.text + self.source[edit.end :]


@dataclass
class _Module:
    """The file, and what the operators need to know about it as a whole."""

    text: _Text
    parents: dict[ast.AST, ast.AST]
    bound: frozenset[str]  # names bound at module level or by an import anywhere
    imported: frozenset[str]  # names bound by an import
    math_names: frozenset[str]  # names the math module is imported as

    @classmethod
    def of(cls, tree: ast.Module, text: _Text) -> _Module:
        imported, math_names = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    imported.add(name)
                    if isinstance(node, ast.Import) and alias.name == "math":
                        math_names.add(name)
        defined = {
            node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        assigned = {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        return cls(text, parents, frozenset(imported | defined | assigned), frozenset(imported), frozenset(math_names))


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))
