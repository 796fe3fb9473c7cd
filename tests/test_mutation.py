"""Single-point mutants: what each operator makes, what is never touched, and a stable identity."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from lmgrade.prove.mutation import make_mutants
from lmgrade.prove.mutation_operators import OPERATORS

NGRAM = (Path(__file__).resolve().parents[1] / "reference" / "ngram" / "ngram.py").read_text()


def mutants(source: str, operator: str | None = None):
    return [m for m in make_mutants(source, "m.py") if operator in (None, m.operator)]


def afters(source: str, operator: str) -> list[str]:
    return [m.after for m in mutants(source, operator)]


@pytest.fixture(scope="module")
def ngram_mutants():
    return make_mutants(NGRAM, "ngram.py")


# --- Each operator -------------------------------------------------------------------------------


def test_a_mutant_changes_one_token_and_keeps_the_authors_formatting():
    source = "def f(a, b):\n    return (a  /  b)  # ratio\n"
    [mutant] = mutants(source, "arith")
    assert mutant.source == "def f(a, b):\n    return (a  *  b)  # ratio\n"
    assert mutant.diff() == "m.py:2 f: `return (a / b) # ratio` -> `return (a * b) # ratio`"
    assert (mutant.file, mutant.function, mutant.line, mutant.occurrence) == ("m.py", "f", 2, 0)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = a + b", ["y = a - b"]),
        ("y = a - b", ["y = a + b"]),
        ("y = a * b", ["y = a / b"]),
        ("y = a / b", ["y = a * b"]),
        ("y = a // b", ["y = a / b"]),
        ("y = a ** b", ["y = a * b"]),
        ("y = a % b", ["y = a // b"]),
        ("y = h @ W", ["y = h * W"]),
        ("y = -(a + b)", ["y = (a + b)", "y = -(a - b)"]),
        ('y = "%d items" % n', []),
    ],
)
def test_arith(source, expected):
    assert afters(source + "\n", "arith") == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("dW += x @ h", ["dW = x @ h", "dW -= x @ h"]),
        ("x -= e", ["x = e", "x += e"]),
        ("x *= 2", ["x = 2", "x /= 2"]),
        ("x /= 2", ["x = 2", "x *= 2"]),
        ("x //= 2", ["x = 2"]),
    ],
)
def test_aug_assign(source, expected):
    assert afters(source + "\n", "aug_assign") == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = a < b", ["y = a <= b"]),
        ("y = a <= b", ["y = a < b"]),
        ("y = a > b", ["y = a >= b"]),
        ("y = a >= b", ["y = a > b"]),
        ("y = a == b", ["y = a != b"]),
        ("y = a != b", ["y = a == b"]),
        ("y = a in b", ["y = a not in b"]),
        ("y = a not  in b", ["y = a in b"]),
        ("y = a is None", ["y = a is not None"]),
        ("y = a is not None", ["y = a is None"]),
        ("y = 0 <= i < n", ["y = 0 < i < n", "y = 0 <= i <= n"]),
    ],
)
def test_compare(source, expected):
    assert afters(source + "\n", "compare") == expected


def test_bool_swaps_the_whole_chain_and_drops_not():
    assert afters("y = a and b or not c\n", "bool") == [
        "y = a or b or not c",
        "y = a and b and not c",
        "y = a and b or c",
    ]
    assert afters("y = a or b or c\n", "bool") == ["y = a and b and c"]


def test_negate_cond():
    source = (
        "def f(x):\n"
        "    assert x > 0, 'positive'\n"
        "    while x < 9:\n"
        "        if x:\n"
        "            x = x + 1 if x > 3 else [v for v in x if v]\n"
    )
    assert afters(source, "negate_cond") == [
        "assert not (x > 0), 'positive'",
        "while not (x < 9):",
        "if not (x):",
        "x = x + 1 if not (x > 3) else [v for v in x if v]",
        "x = x + 1 if x > 3 else [v for v in x if not (v)]",
    ]


def test_negate_cond_leaves_exact_negations_to_compare_and_bool():
    assert afters("if a == b:\n    f()\nif not c:\n    f()\nif d in e:\n    f()\n", "negate_cond") == []


def test_const():
    source = "x = 0\ny = 1\nz = 2.5\nflag = True\ns = '3'\nw = -0\nv = 0 ** k\n"
    assert afters(source, "const") == [
        "x = 1",
        "x = -1",
        "y = 2",
        "y = 0",
        "z = 3.5",
        "z = 1.5",
        "flag = False",
        "w = -1",
        "w = -(-1)",
        "v = 1 ** k",
        "v = (-1) ** k",
    ]


def test_const_mutates_defaults_not_annotations():
    source = "def f(n: Annotated[int, 5] = 2) -> Annotated[int, 7]:\n    return n\n"
    assert afters(source, "const") == [
        "def f(n: Annotated[int, 5] = 3) -> Annotated[int, 7]:",
        "def f(n: Annotated[int, 5] = 1) -> Annotated[int, 7]:",
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = x[:-1]", ["y = x[1:-1]", "y = x[:0]", "y = x[:-2]", "y = x[:]"]),
        ("y = x[1:]", ["y = x[2:]", "y = x[:]", "y = x[1:-1]"]),
        (
            "y = x[i:j]",
            ["y = x[:j]", "y = x[i + 1:j]", "y = x[i - 1:j]", "y = x[i:]", "y = x[i:j + 1]", "y = x[i:j - 1]"],
        ),
        (
            "y = x[t - n + 1 : t]",
            [
                "y = x[: t]",
                "y = x[t - n + 2 : t]",
                "y = x[t - n + 0 : t]",
                "y = x[t - n + 1 :]",
                "y = x[t - n + 1 : t + 1]",
                "y = x[t - n + 1 : t - 1]",
            ],
        ),
        ("y = x[(i):]", ["y = x[:]", "y = x[(i + 1):]", "y = x[(i - 1):]", "y = x[(i):-1]"]),
        ("y = x[a or b:]", ["y = x[(a or b) + 1:]", "y = x[(a or b) - 1:]", "y = x[:]", "y = x[a or b:-1]"]),
        ("y = x[::2]", ["y = x[1::2]", "y = x[:-1:2]"]),
        ("y = x[:, 0]", []),
    ],
)
def test_slice(source, expected):
    assert afters(source + "\n", "slice") == expected


def test_drop_stmt_drops_simple_statements_only():
    source = (
        "import numpy as np\n"
        "def f(x):\n"
        '    """Docstring."""\n'
        "    y = x + 1\n"
        "    print(y)\n"
        "    if y:\n"
        "        raise ValueError('no')\n"
        "    return y\n"
    )
    dropped = mutants(source, "drop_stmt")
    assert [(m.line, m.before, m.after) for m in dropped] == [(4, "y = x + 1", "pass"), (5, "print(y)", "pass")]
    assert dropped[0].source == source.replace("y = x + 1", "pass")


def test_return():
    source = (
        "def f(x):\n"
        "    if x:\n"
        "        return x + 1\n"
        "    if x > 1:\n"
        "        return None\n"
        "    if x > 2:\n"
        "        return 's'\n"
        "    return\n"
    )
    assert [(m.line, m.after) for m in mutants(source, "return")] == [(3, "return None")]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("y = f(a, b, c)", ["y = f(b, a, c)"]),
        ("y = rng.uniform(-bound, bound)", ["y = rng.uniform(bound, -bound)"]),
        ("y = f(a, a)", []),
        ("y = f(*a, b)", []),
        ("y = max(a, b)", []),
        ("y = q.transpose(-2, -1)", []),
    ],
)
def test_args(source, expected):
    assert afters(source + "\n", "args") == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import numpy as np\ny = np.log(p)", ["y = np.log2(p)", "y = np.log10(p)"]),
        ("import math\ny = math.log2(p)", ["y = math.log(p)"]),
        ("y = max(xs)", ["y = min(xs)"]),
        ("y = sum(xs)", []),  # no `mean` in scope
        ("from statistics import mean\ny = sum(xs)", ["y = mean(xs)"]),
        ("y = logits.argmax(-1)", ["y = logits.argmin(-1)", "y = logits.argmax(-2)", "y = logits.argmax(0)"]),
        ("y = g.sum(axis=0)", ["y = g.mean(axis=0)", "y = g.sum(axis=1)"]),
        ("import numpy as np\ny = np.sum(g, 0)", ["y = np.mean(g, 0)", "y = np.sum(g, 1)"]),
        ("y = sum(xs, 0)", []),  # a builtin's second argument is no axis
        (
            "import torch\natt = torch.softmax(att, dim=-1)",
            [
                "att = torch.log_softmax(att, dim=-1)",
                "att = torch.softmax(att, dim=-2)",
                "att = torch.softmax(att, dim=0)",
            ],
        ),
        (
            "y = x.mean(-1, keepdim=True)",
            [
                "y = x.sum(-1, keepdim=True)",
                "y = x.mean(-2, keepdim=True)",
                "y = x.mean(0, keepdim=True)",
                "y = x.mean(-1, keepdim=False)",
            ],
        ),
        ("y = h @ W.T", ["y = h @ W"]),
        ("y = (a + b).T", ["y = (a + b)"]),
        ("import numpy as np\ny = np.zeros(3, dtype=np.float64)", ["y = np.zeros(3, dtype=np.float32)"]),
    ],
)
def test_swap_func(source, expected):
    assert afters(source + "\n", "swap_func") == expected


def test_a_tree_two_operators_make_is_kept_once_under_the_specific_name():
    found = [m for m in mutants("y = g.sum(axis=0)\n") if m.after == "y = g.sum(axis=1)"]
    assert [m.operator for m in found] == ["swap_func"]


# --- Positions -----------------------------------------------------------------------------------


def test_the_change_is_reported_on_its_own_line():
    source = "total = (a\n         + b)  # sum\n"
    [mutant] = mutants(source, "arith")
    assert (mutant.line, mutant.before, mutant.after) == (2, "+ b) # sum", "- b) # sum")
    assert mutant.source == "total = (a\n         - b)  # sum\n"


def test_columns_after_non_ascii_text():
    [mutant] = mutants('label = "héllo"; y = a * b\n', "arith")
    assert mutant.source == 'label = "héllo"; y = a / b\n'


def test_functions_are_qualified_names():
    source = "x = 1\nclass A:\n    k = 2\n    def f(self):\n        def g():\n            return 3\n        return g\n"
    assert [(m.function, m.before) for m in mutants(source, "const")][::2] == [
        ("<module>", "x = 1"),
        ("A", "k = 2"),
        ("A.f.g", "return 3"),
    ]


# --- Never mutated -------------------------------------------------------------------------------

PROTECTED = '''\
"""Module docstring, 1 + 1."""
from __future__ import annotations

import math
from typing import Sequence

LIMIT: int = 3


def deco(*args):
    return lambda f: f


@deco(2 + 1)
def f(xs: Sequence[int], n: int = 2) -> list[int]:
    """Docstring with n > 1."""
    label = f"{n - 1} items" + "x" * 2 + "%d" % n
    if n < 1:
        raise ValueError(f"n must be >= {1 + 0}, got {n - 1}")
    return [x * n for x in xs]


if __name__ == "__main__":
    print(f([1], 2 + 1))
'''


def _protected_parts(source: str) -> tuple[list[str], Counter]:
    """What must be the same in every mutant, and what may be dropped (with its statement) but never changed."""
    tree = ast.parse(source)
    f = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "f")
    raises = [node for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    same = [
        ast.get_docstring(tree),
        ast.get_docstring(f),
        ast.dump(tree.body[-1]),
        *(ast.dump(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))),
        *(ast.dump(node) for node in f.decorator_list),
        ast.dump(f.returns),
        *(ast.dump(arg.annotation) for arg in f.args.args),
        *(ast.dump(node) for node in raises),
    ]
    strings = Counter(
        ast.dump(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
    )
    strings.update(ast.dump(node.annotation) for node in ast.walk(tree) if isinstance(node, ast.AnnAssign))
    return same, strings


def test_docstrings_strings_imports_annotations_decorators_raises_and_main_are_never_mutated():
    same, strings = _protected_parts(PROTECTED)
    found = make_mutants(PROTECTED, "p.py")
    assert found
    for mutant in found:
        mutant_same, mutant_strings = _protected_parts(mutant.source)
        assert mutant_same == same, mutant.diff()
        assert mutant_strings <= strings, mutant.diff()
    lines = {m.line for m in found}
    assert lines.isdisjoint({1, 2, 4, 5, 14, 16, 19, 23, 24})


def test_the_condition_guarding_a_raise_is_mutated():
    afters_ = {m.after for m in make_mutants(PROTECTED, "p.py")}
    assert {"if n <= 1:", "if n < 2:", "if not (n < 1):"} <= afters_
    assert "def f(xs: Sequence[int], n: int = 3) -> list[int]:" in afters_


# --- The ngram reference -------------------------------------------------------------------------


def test_every_ngram_mutant_parses_and_differs_from_the_reference_and_from_the_others(ngram_mutants):
    original = ast.dump(ast.parse(NGRAM))
    trees = [ast.dump(ast.parse(m.source)) for m in ngram_mutants]
    assert original not in trees
    assert len(set(trees)) == len(trees)
    assert {m.operator for m in ngram_mutants} == set(OPERATORS)


def test_ngram_mutants_have_one_line_diffs_and_distinct_keys(ngram_mutants):
    assert len({m.key for m in ngram_mutants}) == len(ngram_mutants)
    for mutant in ngram_mutants:
        assert mutant.diff().startswith(f"ngram.py:{mutant.line} {mutant.function}: `")
        assert "\n" not in mutant.diff()
        assert mutant.before.startswith(" ".join(NGRAM.splitlines()[mutant.line - 1].split()))


def test_the_order_and_the_keys_are_deterministic(ngram_mutants):
    again = make_mutants(NGRAM, "ngram.py")
    assert again == ngram_mutants
    assert [m.key for m in again] == [m.key for m in ngram_mutants]


def test_keys_survive_an_edit_elsewhere_in_the_file(ngram_mutants):
    edited = NGRAM.replace("\ndef pad(", "\ndef helper(z):\n    return z + 1\n\n\ndef pad(", 1)
    edited = edited.replace("\nclass NGramLM", "\n\nclass NGramLM", 1)
    assert edited != NGRAM
    by_key = {m.key: m for m in make_mutants(edited, "ngram.py")}
    assert {m.key for m in ngram_mutants} <= set(by_key)
    prob = next(m for m in ngram_mutants if m.function == "NGramLM.prob" and m.operator == "arith")
    assert by_key[prob.key].line == prob.line + 5


def test_a_line_written_twice_gets_two_occurrences():
    found = mutants("def f(x):\n    x += 1\n    x += 1\n    return x\n", "aug_assign")
    assert [(m.line, m.after, m.occurrence) for m in found] == [
        (2, "x = 1", 0),
        (2, "x -= 1", 0),
        (3, "x = 1", 1),
        (3, "x -= 1", 1),
    ]
    assert len({m.key for m in found}) == 4


def test_a_file_that_does_not_parse_is_named_in_the_error():
    with pytest.raises(ValueError, match=r"broken\.py: line 2"):
        make_mutants("x = 1\ndef f(:\n    pass\n", "broken.py")
