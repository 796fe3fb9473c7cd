"""Single-point mutants of a Python file, to measure what a grader catches.

``make_mutants(source, filename)`` returns every mutant that one operator makes
at one place in the file. ``lmgrade mutants`` grades each one as a submission;
a mutant that keeps full marks is a change to the reference no check notices.

Text spans, not ast.unparse
    A mutant is the original text with one range replaced. The range lies
    within the span of one AST node (lineno/col_offset to
    end_lineno/end_col_offset, sliced as ast.get_source_segment slices it) and
    is as small as the operator allows: the ``/`` of ``a / b``, the ``+=`` of
    ``dW += g``, one bound of a slice. Everything else, the author's spacing,
    brackets, comments and quotes, stays as it was, so a change reads as an
    edit of the line the author wrote. Printing the mutated tree back with
    ast.unparse would drop the comments and reformat every line.

Checked, deduplicated, ordered
    A candidate must parse and its tree (ast.dump, positions ignored) must
    differ from the original's and from every mutant kept before it. When two
    operators make the same tree (``const`` and ``swap_func`` both turn
    ``axis=0`` into ``axis=1``), the one listed first in OPERATORS keeps it:
    the more specific name says more about the bug. Mutants come in the order
    of their place in the file, then of OPERATORS.

Identity that survives edits
    ``Mutant.key`` is the file, the enclosing function, the changed line(s)
    before and after (whitespace collapsed) and an occurrence number for
    repeats. It has no line number, so a mutant recorded once is recognised
    after the file changes elsewhere.

Never mutated
    Docstrings and every string (f-strings included), imports, annotations,
    decorators, ``raise`` statements (their messages), assert messages and the
    ``if __name__ == "__main__":`` block. The condition of an ``if`` whose
    body raises is mutated: that is how a grader's checks of bad arguments
    are measured.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import math
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

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


def _collapse(text: str) -> str:
    return " ".join(text.split())


# --- Source text ---------------------------------------------------------------------------------

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


# --- What may be mutated -------------------------------------------------------------------------

# Fields holding annotations and decorators: never mutated, whatever they contain.
_UNMUTATED_FIELDS = frozenset({"annotation", "returns", "decorator_list", "type_params"})
_UNMUTATED_STATEMENTS = tuple(
    kind for kind in (ast.Import, ast.ImportFrom, ast.Raise, getattr(ast, "TypeAlias", None)) if kind is not None
)


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


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _is_main_guard(node: ast.AST) -> bool:
    if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
        return False
    sides = [node.test.left, node.test.comparators[0]]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    strings = {side.value for side in sides if isinstance(side, ast.Constant)}
    return isinstance(node.test.ops[0], ast.Eq) and names == {"__name__"} and strings == {"__main__"}


# --- Operators -----------------------------------------------------------------------------------
# Each takes a node and the module and yields the edits it makes at that node (often none).

_SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_ARITH_SWAPS = {
    ast.Add: "-",
    ast.Sub: "+",
    ast.Mult: "/",
    ast.Div: "*",
    ast.FloorDiv: "/",
    ast.Pow: "*",
    ast.Mod: "//",
    ast.MatMult: "*",
}
_AUG_SWAPS = {ast.Add: "-=", ast.Sub: "+=", ast.Mult: "/=", ast.Div: "*="}
_COMPARE_PATTERNS = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: r"\bin\b",
    ast.NotIn: r"\bnot\s+in\b",
    ast.Is: r"\bis\b",
    ast.IsNot: r"\bis\s+not\b",
}
_COMPARE_SWAPS = {
    ast.Lt: "<=",
    ast.LtE: "<",
    ast.Gt: ">=",
    ast.GtE: ">",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
}
# Negating these would repeat another operator's mutant: `compare` already
# turns `a == b` into `a != b`, and `bool` turns `not c` into `c`.
_EXACTLY_NEGATED_BY_COMPARE = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)

_FUNCTION_SWAPS = {
    "log": ("log2", "log10"),
    "log2": ("log",),
    "log10": ("log",),
    "sum": ("mean",),
    "mean": ("sum",),
    "max": ("min",),
    "min": ("max",),
    "argmax": ("argmin",),
    "argmin": ("argmax",),
    "amax": ("amin",),
    "amin": ("amax",),
    "softmax": ("log_softmax",),
    "log_softmax": ("softmax",),
}
# Reductions and softmaxes, whose first argument (as a method: `x.sum(-1)`) or
# second (as a function: `np.sum(x, -1)`) may be the axis.
_TAKES_AXIS = frozenset(
    {
        "softmax",
        "log_softmax",
        "sum",
        "mean",
        "max",
        "min",
        "argmax",
        "argmin",
        "amax",
        "amin",
        "cumsum",
        "prod",
        "std",
        "var",
        "logsumexp",
    }
)
_AXIS_KEYWORDS = frozenset({"axis", "dim"})
_KEEPDIM_KEYWORDS = frozenset({"keepdims", "keepdim"})
# The first two axes confused, the last with the one before it or with the first.
_AXIS_SWAPS = {0: (1,), 1: (0,), -1: (-2, 0), -2: (-1,)}
# Swapping the arguments of these gives the same result: a mutant no check could kill.
_SYMMETRIC_FUNCTIONS = frozenset({"max", "min", "maximum", "minimum", "transpose", "swapaxes", "swapdims"})


def _swap_func(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """A function confused with its usual neighbour, an axis with another, a transpose or precision lost."""
    if isinstance(node, ast.Call):
        yield from _swapped_function_name(node, module)
        yield from _swapped_positional_axis(node, module)
    elif isinstance(node, ast.keyword):
        yield from _swapped_keyword(node, module)
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        if node.attr == "T":
            end = module.text.span(node)[1]
            dot = module.text.find(module.text.span(node.value)[1], end, r"\.")
            if dot is not None:
                yield _Edit(dot[0], end, "")  # W.T -> W
        elif node.attr == "float64":
            yield _Edit(*_attribute_name_span(node, module), "float32")


def _swapped_function_name(call: ast.Call, module: _Module) -> Iterator[_Edit]:
    func = call.func
    if isinstance(func, ast.Name):
        for other in _FUNCTION_SWAPS.get(func.id, ()):
            # A name the file never binds would only raise NameError.
            if other in module.bound or hasattr(builtins, other):
                yield _Edit(*module.text.span(func), other)
    elif isinstance(func, ast.Attribute):
        for other in _FUNCTION_SWAPS.get(func.attr, ()):
            # math is the one library known here without importing anything: it has no mean or argmax.
            on_math = isinstance(func.value, ast.Name) and func.value.id in module.math_names
            if not on_math or hasattr(math, other):
                yield _Edit(*_attribute_name_span(func, module), other)


def _swapped_positional_axis(call: ast.Call, module: _Module) -> Iterator[_Edit]:
    if _called_name(call) not in _TAKES_AXIS:
        return
    if isinstance(call.func, ast.Attribute) and not _rooted_in(call.func.value, module.imported):
        position = 0  # a method: x.sum(-1)
    elif _rooted_in(call.func, module.imported):
        position = 1  # a library function: np.sum(x, -1), torch.softmax(x, -1)
    else:
        return  # a builtin or the file's own function: sum(xs, 0) has no axis
    if len(call.args) > position:
        yield from _swapped_axis(call.args[position], module)


def _swapped_keyword(keyword: ast.keyword, module: _Module) -> Iterator[_Edit]:
    if keyword.arg in _AXIS_KEYWORDS:
        yield from _swapped_axis(keyword.value, module)
    elif keyword.arg in _KEEPDIM_KEYWORDS and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
        yield _Edit(*module.text.span(keyword.value), "False")


def _swapped_axis(value: ast.expr, module: _Module) -> Iterator[_Edit]:
    for other in _AXIS_SWAPS.get(_int_literal(value), ()):
        yield _Edit(*module.text.span(value), str(other))


def _aug_assign(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """`dW += g` -> `dW = g`: the gradient overwritten instead of accumulated; and `+=` <-> `-=`, `*=` <-> `/=`."""
    if not isinstance(node, ast.AugAssign):
        return
    token = module.text.between(node.target, node.value, re.escape(_SYMBOLS[type(node.op)] + "="))
    if token is None:
        return
    yield _Edit(*token, "=")
    if type(node.op) in _AUG_SWAPS:
        yield _Edit(*token, _AUG_SWAPS[type(node.op)])


def _compare(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """Each comparison operator of a chain replaced by its off-by-one or opposite."""
    if not isinstance(node, ast.Compare):
        return
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:]):
        token = module.text.between(left, right, _COMPARE_PATTERNS[type(op)])
        if token is not None:
            yield _Edit(*token, _COMPARE_SWAPS[type(op)])


def _bool(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """`and` <-> `or` (every operator of the chain), `not c` -> `c`."""
    if isinstance(node, ast.BoolOp):
        word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        tokens = [module.text.between(a, b, rf"\b{word}\b") for a, b in zip(node.values, node.values[1:])]
        if None not in tokens:
            yield _replaced_tokens(tokens, other, module.text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _dropped_prefix(node, "not", module.text)


def _negate_cond(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """The condition of an if, while, conditional expression, assert or comprehension filter negated."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        conditions = [node.test]
    elif isinstance(node, ast.comprehension):
        conditions = node.ifs
    else:
        return
    for condition in conditions:
        if not _negated_by_another_operator(condition):
            start, end = module.text.span(condition)
            yield _Edit(start, end, f"not ({module.text.source[start:end]})")


def _negated_by_another_operator(condition: ast.expr) -> bool:
    if isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Not):
        return True
    return (
        isinstance(condition, ast.Compare)
        and len(condition.ops) == 1
        and isinstance(condition.ops[0], _EXACTLY_NEGATED_BY_COMPARE)
    )


def _arith(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """+ <-> -, * <-> /, // -> /, ** -> *, % -> //, @ -> *; a unary minus dropped."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_SWAPS:
        if isinstance(node.op, ast.Mod) and _is_string(node.left):
            return  # "%d" % n formats a string: no arithmetic to get wrong
        token = module.text.between(node.left, node.right, re.escape(_SYMBOLS[type(node.op)]))
        if token is not None:
            yield _Edit(*token, _ARITH_SWAPS[type(node.op)])
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield _dropped_prefix(node, "-", module.text)


def _return(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """`return e` -> `return None`."""
    if isinstance(node, ast.Return) and node.value is not None and not _is_string(node.value):
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield _Edit(*module.text.span(node.value), "None")


def _args(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """The first two positional arguments of a call swapped, where they differ."""
    if not isinstance(node, ast.Call) or len(node.args) < 2 or _called_name(node) in _SYMMETRIC_FUNCTIONS:
        return
    first, second = node.args[:2]
    if isinstance(first, ast.Starred) or isinstance(second, ast.Starred) or ast.dump(first) == ast.dump(second):
        return
    (first_start, first_end), (second_start, second_end) = module.text.span(first), module.text.span(second)
    source = module.text.source
    swapped = source[second_start:second_end] + source[first_end:second_start] + source[first_start:first_end]
    yield _Edit(first_start, second_end, swapped)


def _slice(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """Each bound of a slice moved by one, each present bound dropped.

    A missing bound moves too: x[:j] -> x[1:j] skips the first item and
    x[i:] -> x[i:-1] drops the last, the off-by-ones of inputs and targets.
    """
    if not isinstance(node, ast.Slice) or node.lower is node.upper is node.step is None:
        return  # a bare `:` takes the whole axis; it computes no range to get wrong
    text = module.text
    start, end = text.span(node)
    # Found from the end of the bound before it: a bound may hold colons of its own (`{a: b}[k]`).
    colon = text.find(text.span(node.lower)[1] if node.lower else start, end, ":")
    if colon is None:
        return
    after_upper = text.find(text.span(node.upper)[1] if node.upper else colon[1], end, ":")
    upper_end = after_upper[0] if after_upper else end
    # A dropped bound goes with its brackets and spaces: x[(i):] -> x[:], not x[():].
    if node.lower is None:
        yield _Edit(colon[0], colon[0], "1")
    else:
        moves = list(_moved_bound(node.lower, module))
        if _int_literal(node.lower) is not None:  # x[0:] is x[:], which dropping the bound makes
            moves = [edit for edit in moves if edit.text != "0"]
        yield from moves
        yield _Edit(start, colon[0], "")
    if node.upper is None:
        yield _Edit(colon[1], colon[1], "-1")
    else:
        yield from _moved_bound(node.upper, module)
        yield _Edit(colon[1], upper_end, "")


def _moved_bound(bound: ast.expr, module: _Module) -> Iterator[_Edit]:
    """`j` -> `j + 1` and `j - 1`."""
    start, end = module.text.span(bound)
    number, sign = _trailing_number(bound)
    if number is not None:
        # The number itself moves, so that the mutant reads `t - n + 2`, not `t - n + 1 + 1`.
        value = _int_literal(number)
        for moved in (value + sign, value - sign):
            yield _Edit(*module.text.span(number), str(moved))
    elif _binds_looser_than_plus(bound):
        for suffix in (" + 1", " - 1"):
            yield _Edit(start, end, f"({module.text.source[start:end]}){suffix}")
    else:
        for suffix in (" + 1", " - 1"):
            yield _Edit(end, end, suffix)


def _const(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """A number n -> n + 1 and n - 1 (so 0 <-> 1 too); True <-> False."""
    if not isinstance(node, ast.Constant):
        return
    span = module.text.span(node)
    if isinstance(node.value, bool):
        yield _Edit(*span, str(not node.value))
    elif type(node.value) in (int, float) and math.isfinite(node.value):
        for number in (node.value + 1, node.value - 1):
            text = repr(number)
            if number < 0 and _negative_needs_brackets(node, module.parents.get(node)):
                text = f"({text})"
            yield _Edit(*span, text)


def _drop_stmt(node: ast.AST, module: _Module) -> Iterator[_Edit]:
    """A simple statement with an effect (assignment, call, del) replaced by `pass`."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Delete)) or (
        isinstance(node, ast.AnnAssign) and node.value is not None
    ):
        yield _Edit(*module.text.span(node), "pass")


# Their order decides which operator keeps a mutant that two of them make:
# the specific before the general.
_OPERATORS: dict[str, Callable[[ast.AST, _Module], Iterator[_Edit]]] = {
    "swap_func": _swap_func,
    "aug_assign": _aug_assign,
    "compare": _compare,
    "bool": _bool,
    "negate_cond": _negate_cond,
    "arith": _arith,
    "return": _return,
    "args": _args,
    "slice": _slice,
    "const": _const,
    "drop_stmt": _drop_stmt,
}
OPERATORS: tuple[str, ...] = tuple(_OPERATORS)


# --- Helpers of the operators --------------------------------------------------------------------


def _replaced_tokens(tokens: list[tuple[int, int]], replacement: str, text: _Text) -> _Edit:
    """One edit from the first token to the last, each token replaced, the text between them kept."""
    pieces, previous_end = [], tokens[0][0]
    for start, end in tokens:
        pieces += [text.source[previous_end:start], replacement]
        previous_end = end
    return _Edit(tokens[0][0], tokens[-1][1], "".join(pieces))


def _dropped_prefix(node: ast.UnaryOp, prefix: str, text: _Text) -> _Edit:
    """`-x` -> `x`, `not (c)` -> `(c)`: the operator and the spaces after it removed, brackets kept."""
    start = text.span(node)[0]
    end = start + len(prefix)
    while text.source[end : end + 1] in (" ", "\t"):
        end += 1
    return _Edit(start, end, "")


def _attribute_name_span(node: ast.Attribute, module: _Module) -> tuple[int, int]:
    end = module.text.span(node)[1]  # the name is the last token of an attribute
    return end - len(node.attr), end


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _rooted_in(node: ast.expr, names: frozenset[str]) -> bool:
    """Whether a dotted name (np, torch.nn.functional) starts with one of `names`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in names


def _int_literal(node: ast.expr) -> int | None:
    """The value of `3` or `-3`; None for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    return sign * node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _trailing_number(bound: ast.expr) -> tuple[ast.expr | None, int]:
    """The integer a bound ends with (`3`, `-1`, the 1 of `t - n + 1`), and whether it adds (1) or subtracts (-1)."""
    if _int_literal(bound) is not None:
        return bound, 1
    if isinstance(bound, ast.BinOp) and isinstance(bound.op, (ast.Add, ast.Sub)):
        if _int_literal(bound.right) is not None:
            return bound.right, 1 if isinstance(bound.op, ast.Add) else -1
    return None, 1


def _binds_looser_than_plus(node: ast.expr) -> bool:
    """Whether `node + 1` would add 1 to only part of node (`a or b + 1`)."""
    if isinstance(node, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr)):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    return isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.BitOr, ast.BitXor, ast.BitAnd, ast.LShift, ast.RShift)
    )


def _negative_needs_brackets(node: ast.Constant, parent: ast.AST | None) -> bool:
    """Whether a negative number written in place of `node` would change how the expression groups.

    `-0` -> `-(-1)`, `0 ** 2` -> `(-1) ** 2`; elsewhere (`x - -1`, `f(-1)`) the
    minus sign binds as a number's would.
    """
    if isinstance(parent, ast.UnaryOp):
        return True
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Pow):
        return parent.left is node
    return isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node
