"""assignment.toml is validated with errors that name the file, the key and the problem."""

from __future__ import annotations

import textwrap

import pytest

from lmgrade.declare import catalog, templates
from lmgrade.declare.assignment import AssignmentError, load_assignment

GOOD = textwrap.dedent("""
    [assignment]
    name = "toy"
    files = ["toy.py"]

    [templates]
    "toy.py" = "toy.py.j2"

    [variants.activation]
    default = "sigmoid"
    choices = ["sigmoid", "tanh"]

    [checks.one]
    points = 2
""")


def write(tmp_path, text, template="def f():\n    raise NotImplementedError\n"):
    folder = tmp_path / "toy"
    folder.mkdir(exist_ok=True)
    (folder / "toy.py.j2").write_text(template)
    path = folder / "assignment.toml"
    path.write_text(text)
    return path


def test_a_good_file_loads(tmp_path):
    spec = load_assignment(write(tmp_path, GOOD))
    assert spec.files == ("toy.py",) and spec.checks["one"].points == 2
    assert spec.resolve_variant({}) == {"activation": "sigmoid"}
    assert spec.resolve_variant({"activation": "tanh"}) == {"activation": "tanh"}


@pytest.mark.parametrize(
    "change,message",
    [
        (("points = 2", 'points = "two"'), r"\[checks.one\] points: expected int or float, got str 'two'"),
        (("points = 2", "points = -1"), r"\[checks.one\] points: must be >= 0"),
        (("points = 2", 'visibility = "secret"'), r"\[checks.one\] visibility: 'secret' is not one of"),
        (("points = 2", "pionts = 2"), r"\[checks.one\] pionts: unknown key"),
        (('name = "toy"', 'name = "other"'), r"\[assignment\] name: 'other' must match the folder name"),
        (('files = ["toy.py"]', "files = []"), r"\[assignment\] files: expected a non-empty list"),
        (
            ('"toy.py" = "toy.py.j2"', '"toy.py" = "missing.j2"'),
            r"\[templates\] toy.py: template 'missing.j2' does not exist",
        ),
        (('default = "sigmoid"', 'default = "relu"'), r"\[variants.activation\] default: 'relu' is not one of"),
        (
            ("[checks.one]", "[checks.one.limits]\ncpu_s = 0\n[checks.two]"),
            r"\[checks.one.limits\] cpu_s: must be positive",
        ),
        (("[assignment]", "[assignmnet]"), r"\[\] assignmnet: unknown key"),
    ],
)
def test_errors_name_file_key_and_problem(tmp_path, change, message):
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(AssignmentError, match=message) as info:
        load_assignment(path)
    assert str(path) in str(info.value)


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, GOOD + "\n[[[")
    with pytest.raises(AssignmentError, match="not valid TOML"):
        load_assignment(path)


def test_unknown_variant_and_bad_choice(tmp_path):
    spec = load_assignment(write(tmp_path, GOOD))
    with pytest.raises(AssignmentError, match="no variant 'pre_ln'"):
        spec.resolve_variant({"pre_ln": "true"})
    with pytest.raises(AssignmentError, match="choose one of sigmoid, tanh"):
        spec.resolve_variant({"activation": "relu"})


def test_a_broken_template_names_the_file_and_line(tmp_path):
    from lmgrade.declare.assignment import Assignment

    spec = load_assignment(write(tmp_path, GOOD, template="line one\n{% if %}\n"))
    with pytest.raises(AssignmentError, match=r"toy.py.j2:2: template syntax error"):
        templates.render(Assignment(spec, []), {})
    spec = load_assignment(write(tmp_path, GOOD, template="{{ nonexistent }}\n"))
    with pytest.raises(AssignmentError, match=r"toy.py.j2: 'nonexistent' is undefined"):
        templates.render(Assignment(spec, []), {})


def test_the_shipped_assignment_is_valid():
    assignment, _ = catalog.load("ngram")
    assert sum(c.points for c in assignment.checks) == 100
    assert {c.visibility for c in assignment.checks} <= {"visible", "after_due_date"}
