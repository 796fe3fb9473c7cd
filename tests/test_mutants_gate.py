"""`lmgrade mutants` as a gate: exit 1 while a survivor is off the equivalent list, and the entries to paste
into the list printed exactly as the list takes them. The grading itself is replaced by a made-up report
(tests/test_mutants.py grades real mutants)."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from click.testing import CliRunner
from rich.console import Console

from lmgrade.cli import app as cli
from lmgrade.prove import mutants
from lmgrade.prove.mutants import MutantResult, MutantsReport, equivalent_entry, label, load_equivalents
from lmgrade.prove.mutation import Mutant

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# A long label with quotes, a backslash and a non-ASCII letter: what a terminal would wrap and a careless
# copy would mangle.
SURVIVOR = Mutant(
    "ngram.py",
    "NGramLM.perplexity",
    "constant",
    42,
    'return math.exp(-total / max(count, 1)) if count else float("inf")  # "µ" \\ kept',
    'return math.exp(-total / max(count, 2)) if count else float("inf")  # "µ" \\ kept',
    source="",
    occurrence=1,
)
KILLED = Mutant("ngram.py", "pad", "constant", 7, "n - 1", "n - 2", source="")


def report_of(*results: MutantResult) -> MutantsReport:
    return MutantsReport("ngram", made=len(results), results=list(results))


def result(mutant: Mutant, *, killed: bool, equivalent: str | None = None) -> MutantResult:
    return MutantResult(mutant, 0.0 if killed else 1.0, 1.0, [], [], equivalent=equivalent)


def run_command(monkeypatch, tmp_path, report: MutantsReport):
    monkeypatch.setattr(mutants, "run_mutants", lambda *args, **kwargs: report)
    buffer = io.StringIO()
    # 60 columns: narrower than any label, so that a wrapped line would show.
    monkeypatch.setattr(cli, "console", Console(file=buffer, width=60, highlight=False))
    outcome = CliRunner().invoke(cli.main, ["mutants", "ngram", "-o", str(tmp_path / "report.json")])
    return outcome, buffer.getvalue()


def test_a_survivor_off_the_list_exits_1_and_prints_its_entry_to_paste(monkeypatch, tmp_path):
    outcome, shown = run_command(
        monkeypatch, tmp_path, report_of(result(SURVIVOR, killed=False), result(KILLED, killed=True))
    )
    assert outcome.exit_code == 1, outcome.output
    entries = re.findall(r"^\[\[equivalent\]\]\nmutant = .*\nwhy = \"\"$", shown, flags=re.MULTILINE)
    assert len(entries) == 1, shown
    (pasted,) = tomllib.loads(entries[0])["equivalent"]
    assert pasted["mutant"] == label(SURVIVOR) and ":42" not in pasted["mutant"]
    assert json.loads((tmp_path / "report.json").read_text())["survivor_labels"] == [label(SURVIVOR)]


def test_the_pasted_entry_names_the_mutant_once_its_reason_is_written(tmp_path, monkeypatch):
    listed = tmp_path / "equivalent_mutants.toml"
    listed.write_text(equivalent_entry(SURVIVOR), encoding="utf-8")

    class Hook:
        @staticmethod
        def lmgrade_equivalent_mutants(assignment):
            return [[listed]]

    class Manager:
        hook = Hook()

    with pytest.raises(mutants.AssignmentError, match="number 1: expected the keys mutant and why"):
        load_equivalents("ngram", pm=Manager())  # the empty why is refused until it is written
    listed.write_text(equivalent_entry(SURVIVOR).replace('why = ""', 'why = "count is never 0 here"'))
    assert load_equivalents("ngram", pm=Manager()) == {label(SURVIVOR): "count is never 0 here"}


@pytest.mark.parametrize(
    "results",
    [
        [result(KILLED, killed=True)],
        [result(KILLED, killed=True), result(SURVIVOR, killed=False, equivalent="reviewed")],
    ],
    ids=["all killed", "survivor listed"],
)
def test_no_unlisted_survivor_exits_0(monkeypatch, tmp_path, results):
    outcome, shown = run_command(monkeypatch, tmp_path, report_of(*results))
    assert outcome.exit_code == 0, outcome.output
    assert "[[equivalent]]" not in shown and "mutation score" in shown
