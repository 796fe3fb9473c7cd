"""Near-duplicates: a renamed, reformatted, reordered copy is found; independent correct solutions and untouched
stubs are not; no pair of byte-identical submissions is listed twice."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import no_ops, padded, part_of, reformatted, renamed, reordered, starred
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import ROOT, SUBMISSIONS
from lmgrade.course.regrade.graded import Graded
from lmgrade.course.regrade.layout import SubmissionFolder
from lmgrade.course.regrade.near_duplicates import (
    THRESHOLD,
    class_near_duplicates,
    fingerprints,
    near_duplicates,
    normalised_tokens,
)
from lmgrade.declare import templates

REFERENCE = ROOT / "reference" / "ngram" / "ngram.py"


def test_names_literals_comments_docstrings_and_layout_leave_the_same_tokens():
    original = '''
def total(values, scale=2):
    """Sum, scaled."""
    result = 0  # running sum
    for v in values:
        result += v * scale
    return result
'''
    disguised = """
def add_up(xs, factor = 3.5):
  'Other words.'
  # a comment of its own

  acc = 10
  for item in xs:
      acc += item * \\
          factor
  return acc
"""
    assert normalised_tokens(original) == normalised_tokens(disguised)
    assert "V" in normalised_tokens(original) and "for" in normalised_tokens(original)
    assert normalised_tokens("f(a, b,)\n") == normalised_tokens("f(\n    a,\n    b\n)\n")
    assert normalised_tokens('x = "a" "b"\n') == normalised_tokens("y = 'ab'\n")
    # A formatter's parentheses around a long expression go; a call's stay.
    assert normalised_tokens("return (\n    a\n    + b\n)\n") == normalised_tokens("return a + b\n")
    assert normalised_tokens("f(a)\n") != normalised_tokens("f, a\n")
    assert normalised_tokens("x = a + b\n") != normalised_tokens("x = a * b\n")


def test_a_file_that_does_not_parse_still_has_the_fingerprints_of_what_precedes_the_error():
    whole = fingerprints([REFERENCE.read_text()])
    broken = fingerprints([REFERENCE.read_text() + "\ndef broken(:\n    return '''never closed\n"])
    assert len(whole & broken) >= 0.9 * len(whole)


def _class(tmp_path: Path, sources: dict[str, str]) -> list[tuple[SubmissionFolder, Graded]]:
    rows = []
    for key, text in sources.items():
        (tmp_path / key).mkdir()
        (tmp_path / key / "ngram.py").write_text(text)
        rows.append((SubmissionFolder(key, tmp_path / key), Graded()))
    return rows


@pytest.fixture(scope="module")
def stub(ngram):
    return templates.render(*ngram)["ngram.py"]


def test_a_disguised_copy_is_found_and_independent_solutions_are_not(tmp_path, stub):
    reference = REFERENCE.read_text()
    sources = {
        "reference": reference,
        "disguised": reformatted(reordered(renamed(reference, stub))),
        "padded": padded(renamed(reference, stub, prefix="w")),
        "part": part_of(reference, stub),
        "dict_of_dicts": (SUBMISSIONS / "ngram" / "dict_of_dicts" / "ngram.py").read_text(),
        "numpy_table": (SUBMISSIONS / "ngram" / "numpy_table" / "ngram.py").read_text(),
        "trie": (SUBMISSIONS / "ngram" / "trie" / "ngram.py").read_text(),
        "stub_1": stub,
        "stub_2": stub,
    }
    # The disguises are real: the copies compile, and none is the reference's text.
    for key in ("disguised", "padded", "part"):
        compile(sources[key], key, "exec")
        assert sources[key] != reference and "q0_" in sources["disguised"] and "debug_" in sources["padded"]
    pairs = class_near_duplicates(_class(tmp_path, sources), ("ngram.py",), [stub])
    found = {(p.first, p.second) for p in pairs}
    copies = ("reference", "disguised", "padded", "part")
    assert found == {(a, b) for i, a in enumerate(copies) for b in copies[i + 1 :]}
    assert all(p.similarity >= THRESHOLD for p in pairs)
    disguised = next(p for p in pairs if (p.first, p.second) == ("reference", "disguised"))
    assert disguised.similarity > 0.8 and disguised.shared >= 50


def test_independent_solutions_share_well_under_the_threshold(tmp_path, stub):
    solutions = {p.parent.name: p.read_text() for p in sorted((SUBMISSIONS / "ngram").glob("*/ngram.py"))}
    solutions["reference"] = REFERENCE.read_text()
    prints = {key: fingerprints([text], frozenset()) for key, text in solutions.items()}
    assert near_duplicates(prints, threshold=THRESHOLD) == []
    # Measured with the stub discounted, the most similar independent pair shares about a quarter.
    assert all(p.similarity < THRESHOLD for p in near_duplicates(prints, threshold=0.0, min_shared=1))


def test_pairs_of_identical_files_are_left_to_the_identical_groups(tmp_path, stub):
    reference = REFERENCE.read_text()
    rows = _class(tmp_path, {"a": reference, "b": reference, "c": renamed(reference, stub)})
    hashed = [(s, Graded(files_hash="same" if s.key in "ab" else "other")) for s, _ in rows]
    found = [(p.first, p.second) for p in class_near_duplicates(hashed, ("ngram.py",), [stub])]
    assert found == [("a", "c"), ("b", "c")]
    assert [(p.first, p.second) for p in class_near_duplicates(rows, ("ngram.py",), [stub])][0] == ("a", "b")


def test_fingerprints_are_the_same_in_every_process():
    code = (
        "from lmgrade.course.regrade.near_duplicates import fingerprints; import pathlib; "
        f"print(sorted(fingerprints([pathlib.Path({str(REFERENCE)!r}).read_text()]))[:5])"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
        for env in ({**os.environ, "PYTHONHASHSEED": "1"}, {**os.environ, "PYTHONHASHSEED": "2"})
    }
    assert len(runs) == 1 and runs.pop().startswith("[")


# --- rewrites that change nothing: empty starred arguments, no-op statements ---------------------------------


def test_empty_starred_arguments_and_no_op_statements_are_set_aside():
    assert normalised_tokens("f(a, b)\n") == normalised_tokens("f(a, b, *())\n") == normalised_tokens("f(*[], a, b)\n")
    assert (
        normalised_tokens("f(a, b)\n") == normalised_tokens("f(a, *(b,), **{})\n") == normalised_tokens("f(*(a, b))\n")
    )
    assert normalised_tokens("x = (a, b)\n") == normalised_tokens("x = (a, *(), b, *'')\n")
    plain = "def f(x):\n    y = x + 1\n    return y\n"
    assert normalised_tokens(plain) == normalised_tokens(
        "def f(x):\n    pass; y = x + 1; pass\n    ...\n    0\n    'a note'\n    return y; pass\n"
    )
    # What does something stays: a starred name, a call's result, an empty body's own `pass`.
    assert normalised_tokens("f(a, *b)\n") != normalised_tokens("f(a)\n")
    assert normalised_tokens("f(a, *g())\n") != normalised_tokens("f(a)\n")
    assert normalised_tokens("x = g()\n") != normalised_tokens("x = g()\ng()\n")
    assert normalised_tokens("class A:\n    pass\n") == normalised_tokens("class A:\n    ...\n")


def test_a_copy_rewritten_mechanically_is_still_found(tmp_path, stub):
    """Copies that scored 100 but hid below the threshold as tokens: `*()` on every call, `; pass` everywhere."""
    reference = REFERENCE.read_text()
    sources = {
        "reference": reference,
        "starred": starred(reference),
        "no_ops": no_ops(reference),
        "all_of_it": no_ops(starred(reordered(renamed(reference, stub)))),
        "trie": (SUBMISSIONS / "ngram" / "trie" / "ngram.py").read_text(),
    }
    for key in ("starred", "no_ops", "all_of_it"):
        compile(sources[key], key, "exec")
    assert "*()" in sources["starred"] and ";pass" in sources["no_ops"].replace(" ", "")
    pairs = {
        (p.first, p.second): p.similarity
        for p in class_near_duplicates(_class(tmp_path, sources), ("ngram.py",), [stub])
    }
    copies = ("reference", "starred", "no_ops", "all_of_it")
    assert set(pairs) == {(a, b) for i, a in enumerate(copies) for b in copies[i + 1 :]}
    assert pairs[("reference", "starred")] == pairs[("reference", "no_ops")] == 1.0
    assert pairs[("reference", "all_of_it")] > 0.8


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.sampled_from(sorted((ROOT / "reference").glob("*/*.py"))))
def test_any_sprinkling_of_no_ops_and_empty_starred_arguments_leaves_the_same_fingerprints(rng, path):
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and rng.random() < 0.5:
            empty = rng.choice([ast.Tuple([], ast.Load()), ast.List([], ast.Load()), ast.Constant("")])
            node.args.insert(rng.randint(0, len(node.args)), ast.Starred(empty, ast.Load()))
        if isinstance(node, ast.Call) and rng.random() < 0.2:
            node.keywords.append(ast.keyword(None, ast.Dict([], [])))
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            inside = not isinstance(node, ast.Module)  # where a `from __future__` import must come first
            if inside and isinstance(body, list) and body and isinstance(body[0], ast.stmt) and rng.random() < 0.5:
                where = rng.randint(0, len(body))
                body.insert(where, rng.choice([ast.Pass(), ast.Expr(ast.Constant(...)), ast.Expr(ast.Constant(0))]))
    disguised = ast.unparse(ast.fix_missing_locations(tree))
    compile(disguised, path.name, "exec")
    assert fingerprints([disguised]) == fingerprints([source])


HOSTILE_SOURCES = [
    "(" * 100_000,  # deeper than the parser goes
    "x = " + "[" * 5000 + "]" * 5000 + "\n",
    "f(" * 3000 + ")" * 3000 + "\n",
    "\0import os\n",
    "def f(:\n" * 1000,
    "\udce9 = 1\n",
    "'''" + "a" * 10_000,
    "\r\r\r\t\t\f\x0b",
]


@pytest.mark.parametrize("source", HOSTILE_SOURCES, ids=range(len(HOSTILE_SOURCES)))
def test_no_source_stops_the_comparison(source):
    assert isinstance(fingerprints([source]), frozenset)


def test_a_source_larger_than_is_parsed_is_compared_as_written(monkeypatch):
    from lmgrade.course.regrade import syntax_tree

    source = "def f(x):\n    pass; return g(x, *())\n"
    parsed = normalised_tokens(source)
    monkeypatch.setattr(syntax_tree, "MAX_PARSED_CHARS", len(source) - 1)
    assert normalised_tokens(source) != parsed and "pass" in normalised_tokens(source)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_fingerprints(source):
    assert isinstance(fingerprints([source]), frozenset)


def test_a_folder_or_file_that_cannot_be_read_is_left_out_of_the_comparison(tmp_path, stub, monkeypatch):
    reference = REFERENCE.read_text()
    rows = _class(tmp_path, {"a": reference, "b": renamed(reference, stub), "c": reference})

    def unreadable(folder, files):
        if Path(folder).name == "c":
            raise PermissionError(13, "Permission denied", str(folder))
        return real(folder, files)

    from lmgrade.course.regrade import near_duplicates as module

    real = module.locate
    monkeypatch.setattr(module, "locate", unreadable)
    assert [(p.first, p.second) for p in class_near_duplicates(rows, ("ngram.py",), [stub])] == [("a", "b")]
