"""The handout every assignment generates: its tables render in any Markdown viewer, its limits in words."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from helpers import variant_params
from lmgrade import catalog, templates
from lmgrade.handout import cell
from lmgrade.selection import Selection


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
