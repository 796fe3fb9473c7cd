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


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=study_unless(name == "ngram")) for name in ASSIGNMENTS]
)  # ngram's ten variants in the suite (under a minute); the others' in the study
def test_the_table_is_what_a_grading_gives(name):
    graded = [named_share.port_row(bug.name, verdicts) for bug, verdicts in named_share.graded_ports(name, jobs=2)]
    assert _table(name) == graded, "rewrite it: python benchmarks/named_share.py " + name + " --readme"
