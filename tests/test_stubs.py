"""The generated stubs and the reference expose the same public names and signatures."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from helpers import variant_params
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog, templates
from lmgrade.submissions.loader import load_files


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


def _without_variant_parameters(reference: inspect.Signature, stub: inspect.Signature) -> inspect.Signature:
    """The reference's signature less the trailing defaulted parameters the stub leaves out.

    The reference serves every variant: TransformerLM(..., positions="learned")
    where the default variant's stub, like its contract, has no `positions`.
    """
    kept = list(reference.parameters.values())
    while len(kept) > len(stub.parameters) and kept[-1].default is not inspect.Parameter.empty:
        kept.pop()
    return reference.replace(parameters=kept)


def signatures(module) -> dict[str, inspect.Signature]:
    """The signature of every public function and method that `public_api` lists."""
    found = {}
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            found[name] = inspect.signature(obj)
        elif inspect.isclass(obj):
            found.update(
                {
                    f"{name}.{attr}": inspect.signature(member)
                    for attr, member in vars(obj).items()
                    if inspect.isfunction(member) and (not attr.startswith("_") or attr == "__init__")
                }
            )
    return found


@pytest.mark.parametrize("name,pairs", variant_params())
def test_stub_and_reference_match(name, pairs, tmp_path):
    assignment, variant = catalog.load(Selection.parse(name, pairs))
    templates.generate(assignment, variant, tmp_path)
    references = load_files(assignment.spec.reference_folder(), assignment.spec.files)
    # Stubs import each other by their bare names, as submissions do.
    stubs = load_files(tmp_path, assignment.spec.files)
    for filename in assignment.spec.files:
        module = Path(filename).stem
        ref, stub = public_api(references[module]), public_api(stubs[module])
        # Every class and method of the reference is in every variant's stub; a module-level
        # helper of another variant's (RoPE's rotation, the sinusoidal table) may be left out.
        assert set(stub) <= set(ref), f"{filename}: {sorted(set(stub) - set(ref))} not in the reference"
        helpers = {k for k in ref if "(" in ref[k] and "." not in k}
        assert set(ref) - set(stub) <= helpers, f"{filename}: {sorted(set(ref) - set(stub) - helpers)} not in the stub"
        ref_signatures, stub_signatures = signatures(references[module]), signatures(stubs[module])
        for key, value in stub.items():
            if key in stub_signatures:
                expected = _without_variant_parameters(ref_signatures[key], stub_signatures[key])
                assert stub_signatures[key] == expected, f"{filename}: {key}"
            else:
                assert value == ref[key], f"{filename}: {key}"


@pytest.mark.parametrize("name,pairs", variant_params())
def test_every_stub_body_the_student_writes_raises_not_implemented(name, pairs, tmp_path):
    assignment, variant = catalog.load(Selection.parse(name, pairs))
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
    assignment, variant = catalog.load(Selection.parse(name, pairs))
    text = templates.render(assignment, variant)["README.md"]
    for check in assignment.checks:
        assert f"`{check.name}`" in text and f"| {check.points:g} |" in text
    for value in variant.values():
        assert str(value) in text


def test_the_ngram_handout_has_the_worked_example(ngram):
    assignment, variant = ngram
    assert "4/11" in templates.render(assignment, variant)["README.md"]
