"""The generated stubs and the reference expose the same public names and signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from autograder import catalog, templates
from autograder.loader import load_files
from conftest import ASSIGNMENTS, variant_params


def public_api(module) -> dict[str, str]:
    """Public constants, functions and classes (with their methods) defined by `module`."""
    api = {}
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, str):
            api[name] = repr(obj)
        elif getattr(obj, "__module__", None) != module.__name__:
            continue  # imported, not defined here
        elif inspect.isfunction(obj):
            api[name] = str(inspect.signature(obj))
        elif inspect.isclass(obj):
            api[name] = "class"
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and (not attr.startswith("_") or attr == "__init__"):
                    api[f"{name}.{attr}"] = str(inspect.signature(member))
    return api


@pytest.mark.parametrize("assignment_name", ASSIGNMENTS)
def test_stub_and_reference_match(assignment_name, tmp_path):
    assignment, variant = catalog.load(assignment_name)
    templates.generate(assignment, variant, tmp_path)
    references = load_files(assignment.spec.reference_folder(), assignment.spec.files)
    # Stubs import each other by their bare names, as submissions do.
    stubs = load_files(tmp_path, assignment.spec.files)
    for filename in assignment.spec.files:
        name = Path(filename).stem
        assert public_api(stubs[name]) == public_api(references[name]), filename


@pytest.mark.parametrize("name,pairs", variant_params())
def test_every_stub_body_the_student_writes_raises_not_implemented(name, pairs, tmp_path):
    assignment, variant = catalog.load(name, dict(p.split("=", 1) for p in pairs))
    templates.generate(assignment, variant, tmp_path)
    raising = 0
    for filename in assignment.spec.files:
        tree = ast.parse((tmp_path / filename).read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            last = fn.body[-1]
            if isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last):
                raising += 1
                assert ast.get_docstring(fn), f"{filename}: {fn.name} has no docstring"
    assert raising >= 5


def test_the_ngram_stub_leaves_every_function_to_the_student(ngram, tmp_path):
    assignment, variant = ngram
    templates.generate(assignment, variant, tmp_path)
    tree = ast.parse((tmp_path / "ngram.py").read_text())
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert len(functions) == 8
    for fn in functions:
        last = fn.body[-1]
        assert isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last), fn.name


@pytest.mark.parametrize("name,pairs", variant_params())
def test_handout_lists_every_check_with_its_points(name, pairs):
    assignment, variant = catalog.load(name, dict(p.split("=", 1) for p in pairs))
    text = templates.render(assignment, variant)["README.md"]
    for check in assignment.checks:
        assert f"`{check.name}`" in text and f"| {check.points:g} |" in text
    for value in variant.values():
        assert str(value) in text


def test_the_ngram_handout_has_the_worked_example(ngram):
    assignment, variant = ngram
    assert "4/11" in templates.render(assignment, variant)["README.md"]
