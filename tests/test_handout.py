"""The handout every assignment generates: its tables render in any Markdown viewer, its limits in words."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from helpers import variant_params
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog, templates
from lmgrade.declare.checks import Check
from lmgrade.declare.handout import cell, how_checks_pay


def _tables(markdown: str) -> list[list[list[str]]]:
    """Every table as rows of cell texts, as a CommonMark parser with GFM tables reads them."""
    tables, rows, row = [], None, None
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "table_open":
            rows = []
        elif token.type == "table_close":
            tables.append(rows)
            rows = None
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            rows.append(row)
            row = None
        elif token.type == "inline" and row is not None and rows is not None:
            row.append(token.content)
    return tables


@pytest.mark.parametrize("name, settings", variant_params())
def test_every_row_of_every_handout_table_has_its_columns(name, settings):
    assignment, variant = catalog.load(Selection.parse(name, settings))
    handout = templates.render(assignment, variant)["README.md"]
    tables = _tables(handout)
    assert tables, "the handout has no table"
    grading = next(t for t in tables if t[0][:2] == ["check", "what it tests"])
    assert grading[0] == ["check", "what it tests", "limits", "points"]
    assert [row[0].strip("`") for row in grading[1:]] == [c.name for c in assignment.checks]
    for table in tables:
        assert all(len(row) == len(table[0]) for row in table), table
    for check, row in zip(assignment.checks, grading[1:]):
        assert f"{check.limits.wall_s:g} s" in row[2] and f"{check.limits.memory_mb:g} MB" in row[2]
    assert "Printing (any amount), temporary files and files written beside your code never cost a point" in handout


def test_a_cell_with_pipes_and_line_breaks_stays_one_cell():
    markdown = "| a | b |\n|---|---|\n| " + cell("x | y\nz \\| w") + " | 2 |\n"
    (table,) = _tables(markdown)
    assert len(table[1]) == 2 and table[1][1] == "2" and table[1][0].startswith("x ") and "w" in table[1][0]


def _paragraph(handout: str) -> str:
    """The text the harness writes under the grading table."""
    start = handout.index("A check fails a case")
    return handout[start : handout.index("\n\n", start)]


@pytest.mark.parametrize("name", catalog.assignment_folders())
def test_how_checks_pay_names_the_assignments_own_property_and_composed_checks(name):
    assignment, variant = catalog.load(name)
    said = _paragraph(templates.render(assignment, variant)["README.md"])
    by_name = {c.name: c for c in assignment.checks}
    named = re.findall(r"`(\w+)`", said)
    assert named and set(named) <= set(by_name)
    properties = said[said.index("The property check") : said.index("Points within")]
    assert re.findall(r"`(\w+)`", properties) == [c.name for c in assignment.checks if c.property_check]
    composed = re.findall(r"`(\w+)`", said[said.index("Points within") :])
    assert composed and all(by_name[c].composes for c in composed)
    # Nothing of another assignment's checks: the transformer's causality is the transformer's alone.
    assert ("causality" in said) == ("causality" in by_name)
    assert "LayerNorm" not in said and "arguments left unchanged" not in said


def test_how_checks_pay_says_nothing_of_properties_or_stand_ins_an_assignment_has_not():
    def check(name: str, **fields) -> Check:
        return Check(name=name, title=f"{name}: works", scenario=print, make_cases=list, **fields)

    plain = how_checks_pay([check("tokenize", grades=("text.tokenize",)), check("count", grades=("text.count",))])
    assert "property" not in plain and "grader's version" not in plain
    assert plain.startswith("A check fails a case") and "in proportion to the cases passed" in plain
    # One property check, and one check running a component the grader can stand in for: said in the singular.
    one = how_checks_pay(
        [
            check("tokenize", grades=("text.tokenize",)),
            check("count", grades=("text.count",), composes=("tokenize",)),
            check("pure", property_check=True, composes=("tokenize",)),
        ]
    )
    assert "The property check `pure` reports what it sees and pays where the property holds" in one
    # The property check runs the same component: it too is paid by the grader's version of it, case by case.
    assert "The checks `count` and `pure` run other components of yours" in one and "case by case" in one
    # A component whose state the contract leaves free has no stand-in: nothing is promised for it.
    free = how_checks_pay(
        [
            check("fit", grades=("model.Model.fit",), stands_in=False),
            check("prob", grades=("model.Model.prob",), composes=("fit",)),
        ]
    )
    assert "grader's version" not in free
