"""The mutation operators: each yields the single-point edits of one kind a node allows."""

from __future__ import annotations

import ast
import builtins
import math
import re
from collections.abc import Callable, Iterator

from .mutation_source import _Edit, _is_string, _Module, _Text

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
