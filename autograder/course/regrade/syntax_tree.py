"""A submission's code with the rewrites that change nothing undone, before near-duplicates are fingerprinted.

A copy can be disguised by rewrites a tool applies to every line and that
leave what the code does unchanged. Tokens alone see each one as code of its
own: ``f(a, b)`` rewritten as ``f(a, b, *())`` everywhere fell from 100% to
42% similar, and ``; pass`` after every statement to 36%. So the code is
parsed (`ast`, never run) and rewritten back:

- a starred argument or display element that unpacks an empty literal
  (``*()``, ``*[]``, ``*""``, ``**{}``, ``*tuple()``) is removed, and one
  that unpacks a literal tuple or list (``*(a, b)``) becomes its elements;
- a statement that does nothing is removed: ``pass``, and an expression
  statement that is a constant (``...``, ``0``, a string: docstrings too), a
  bare name or a constant in parentheses; a body left empty holds one
  ``pass``, so that every block is written alike;
- a branch fixed by a constant is undone: ``if True:`` around statements
  leaves the statements, ``if False:`` (and ``while False:``) nothing; and
  ``_ = 0``, a constant given to the throwaway name, is removed;
- then the tree is written out again (`ast.unparse`), which also undoes
  every choice of layout: parentheses, quotes, line breaks, semicolons.

Names and literals are set aside afterwards, by the tokens
(`near_duplicates.normalised_tokens`). Code that does not parse (a syntax
error, nesting deeper than the parser or this rewriting can follow) is
compared as it is written.
"""

from __future__ import annotations

import ast

MAX_PARSED_CHARS = 1 << 20  # a source file larger than this is compared as written: no student writes one
_EMPTY_CALLS = frozenset({"tuple", "list", "set", "dict", "str", "bytes", "frozenset"})


def _empty(node: ast.expr) -> bool:
    """Whether unpacking `node` gives nothing, whatever the names in scope: an empty literal."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, ast.Constant):
        return node.value in ("", b"")
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _EMPTY_CALLS
        and not node.args
        and not node.keywords
    )


def _unstarred(elements: list[ast.expr]) -> list[ast.expr]:
    """`elements` with each `*literal` replaced by what it unpacks to."""
    out: list[ast.expr] = []
    for element in elements:
        if isinstance(element, ast.Starred) and _empty(element.value):
            continue
        if isinstance(element, ast.Starred) and isinstance(element.value, (ast.Tuple, ast.List)):
            out += _unstarred(element.value.elts)
            continue
        out.append(element)
    return out


def _does_nothing(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) and t.id == "_" for t in statement.targets):
        return isinstance(statement.value, ast.Constant)  # `_ = 0`: a throwaway name given a constant
    return isinstance(statement, ast.Expr) and isinstance(statement.value, (ast.Constant, ast.Name))


def _unwrapped(statement: ast.stmt) -> list[ast.stmt]:
    """A statement whose branch is fixed by a constant test, as the statements that run: `if True: x` is
    `x`, `if False: x` (or `while False: x`) nothing; any other statement, itself."""
    if isinstance(statement, (ast.If, ast.While)) and isinstance(statement.test, ast.Constant):
        if isinstance(statement, ast.While) and statement.test.value:
            return [statement]  # a loop forever: code of its own
        return statement.body if statement.test.value else statement.orelse
    return [statement]


class _Simplifier(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and all(isinstance(s, ast.stmt) for s in body):
                kept = [s for s in (u for t in body for u in _unwrapped(t)) if not _does_nothing(s)]
                # An emptied body keeps one pass (an `else:` that only held one loses it: it said nothing).
                setattr(node, field, kept or ([] if field != "body" else [ast.Pass()]))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        node.args = _unstarred(node.args)
        node.keywords = [k for k in node.keywords if not (k.arg is None and _empty(k.value))]
        return node

    def _display(self, node):
        self.generic_visit(node)
        node.elts = _unstarred(node.elts)
        return node

    visit_Tuple = visit_List = visit_Set = _display


def simplified_source(source: str) -> str | None:
    """`source` parsed, its no-op rewrites undone and written out again; None where it cannot be parsed."""
    if len(source) > MAX_PARSED_CHARS:
        return None
    try:
        tree = ast.parse(source)
        return ast.unparse(ast.fix_missing_locations(_Simplifier().visit(tree)))
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, AttributeError):
        return None
