"""The ports' bugs/README.md tables (what each single-change variant loses, and the known mistake named on each
check it loses) are a grading's, not typed: written by `benchmarks/named_share.py --readme`, compared here."""

from __future__ import annotations

import importlib.util

import pytest

from helpers import ROOT, study_unless

spec = importlib.util.spec_from_file_location("named_share", ROOT / "benchmarks" / "named_share.py")
named_share = importlib.util.module_from_spec(spec)
spec.loader.exec_module(named_share)

ASSIGNMENTS = sorted(p.name for p in named_share.PORTS.iterdir() if (p / "bugs").is_dir())


def _table(name: str) -> list[str]:
    text = (named_share.PORTS / name / "bugs" / "README.md").read_text(encoding="utf-8")
    assert named_share.README_START in text, f"{name}: bugs/README.md has no written table"
    table = text.split(named_share.README_START, 1)[1].split(named_share.README_END, 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| variant |")]


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_each_variant_has_one_row_and_its_own_paragraph(name):
    folders = [p.name for p in named_share.port_bugs(name)]
    assert [row.split(" | ")[0][2:] for row in _table(name)] == folders
    text = (named_share.PORTS / name / "bugs" / "README.md").read_text(encoding="utf-8")
    assert all(f"- **{folder}**" in text for folder in folders)


# The suite grades three of ngram's variants (a few seconds), the study every variant of every assignment.
SUITE_SAMPLE = {"ngram": {"makemore_mean_nll", "nltk_log2_logscore", "nltk_pad_both_ends"}}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,only",
    [pytest.param(name, None, marks=study_unless(False)) for name in ASSIGNMENTS]
    + [pytest.param(name, only, id=f"{name}-sample") for name, only in SUITE_SAMPLE.items()],
)
def test_the_table_is_what_a_grading_gives(name, only):
    graded = [named_share.port_row(bug.name, v) for bug, v in named_share.graded_ports(name, jobs=2, only=only)]
    rows = [row for row in _table(name) if only is None or row.split(" | ")[0][2:] in only]
    assert len(rows) == len(graded) == len(only or rows), "a sampled variant is not in the table"
    assert rows == graded, "rewrite it: python benchmarks/named_share.py " + name + " --readme"
