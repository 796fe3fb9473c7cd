"""A check's points are set in one place: assignment.toml's [checks.NAME], else the plugin's Check.

Both at once, or neither, is an error when the assignment is loaded, naming
the file and the check; a built-in check's points are assignment.toml's.
"""

from __future__ import annotations

import textwrap

import pytest

from lmgrade import Case, Check
from lmgrade.declare import catalog
from lmgrade.declare.assignment import AssignmentError, bind, load_assignment

TOY = textwrap.dedent("""
    [assignment]
    name = "toy"
    files = ["toy.py"]

    [templates]
    "toy.py" = "toy.py.j2"

    [variants.activation]
    default = "sigmoid"
    choices = ["sigmoid", "tanh"]

    [checks.priced]
    points = 4

    [checks.by_variant]
    points_when = { activation = { tanh = 3 } }

    [checks.unpriced]
    visibility = "hidden"
""")


@pytest.fixture
def spec(tmp_path):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "toy.py.j2").write_text("def f():\n    raise NotImplementedError\n")
    (folder / "assignment.toml").write_text(TOY)
    return load_assignment(folder / "assignment.toml")


def check(name: str, **fields) -> Check:
    return Check(name, name, print, lambda ctx: [Case("x", 1)], **fields)


def provided(**points: float) -> list[Check]:
    """The checks assignment.toml names (every one must be provided), `unpriced` priced by its Check, and
    `points` set in the Checks of those it names (a check of another name is added)."""
    given = {"priced": None, "by_variant": None, "unpriced": 2.0, **points}
    return [check(name, points=value) for name, value in given.items()]


def bound_points(spec, checks, variant=None) -> dict[str, float]:
    return {c.name: c.points for c in bind(spec, checks, variant).checks}


def test_points_come_from_assignment_toml_or_else_from_the_check(spec):
    # assignment.toml's, the Check's where its table gives none, and a check assignment.toml does not name.
    tanh = bound_points(spec, provided(added=1.5), {"activation": "tanh"})
    assert tanh == {"priced": 4.0, "by_variant": 3.0, "unpriced": 2.0, "added": 1.5}


def test_points_set_in_both_places_are_an_error_naming_both(spec):
    with pytest.raises(AssignmentError) as raised:
        bind(spec, provided(priced=4), {"activation": "tanh"})
    said = str(raised.value)
    assert str(spec.path) in said and "[checks.priced] points" in said
    assert "Check('priced') sets points=4" in said and "one place" in said
    # points_when is assignment.toml's setting too.
    with pytest.raises(AssignmentError, match=r"\[checks.by_variant\] points: the plugin's Check"):
        bind(spec, provided(by_variant=1), {"activation": "tanh"})


def test_a_check_without_points_anywhere_is_an_error(spec):
    with pytest.raises(AssignmentError, match=r"the check 'unpriced' has no points: give them in \[checks.unpriced\]"):
        bind(spec, provided(unpriced=None), {"activation": "tanh"})
    with pytest.raises(AssignmentError, match=r"the check 'added' has no points"):
        bind(spec, provided(added=None), {"activation": "tanh"})


def test_points_when_without_points_must_price_the_chosen_variant(spec):
    with pytest.raises(AssignmentError, match=r"\[checks.by_variant\] points_when: no points for activation = sigmoid"):
        bind(spec, provided(), {"activation": "sigmoid"})


@pytest.mark.parametrize("name", ["ngram", "rnn", "lstm"])
def test_the_built_in_checks_are_priced_in_assignment_toml_alone(name):
    spec = catalog.load_spec(name)
    variant = {v.name: v.default for v in spec.variants.values()}
    provided = [
        c for checks in catalog.get_manager().hook.lmgrade_checks(assignment=name, variant=variant) for c in checks
    ]
    assert provided and all(c.points is None for c in provided)
    assignment, _ = catalog.load(name)
    assert {c.name: c.points for c in assignment.checks} == {
        c.name: float(spec.checks[c.name].points_in(variant)) for c in assignment.checks
    }
