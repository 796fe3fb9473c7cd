"""Every line shown is true and whole: a student bundle's command lists only what works there, values are
spelled one way, text from an assignment or a submission is never read as rich markup, names in tables
are never cut, counts agree with their nouns, and equal infinities compare without a warning."""

from __future__ import annotations

import io
import warnings
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from helpers import ROOT, lmgrade
from lmgrade.cli import app as cli
from lmgrade.cli import proving_commands
from lmgrade.cli import student_bundle_commands as bundle_cli
from lmgrade.core.comparison import compare
from lmgrade.core.plural import counted
from lmgrade.core.selection import Selection
from lmgrade.core.stats import fit_problem
from lmgrade.course.bundle import public
from lmgrade.course.bundle.fixtures import describe
from lmgrade.declare import catalog
from lmgrade.declare.checks import Case, CaseVerdict, Tolerance, explains
from lmgrade.prove.mutants import MutantResult, MutantsReport
from lmgrade.prove.mutation import Mutant
from lmgrade.reports.results import Verdict
from lmgrade.reports.terminal import print_report


def printed(monkeypatch, *args) -> str:
    """What `lmgrade ARGS` prints, its console redirected as into a file: not a terminal, 80 columns."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=buffer, width=80, highlight=False))
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == 0, result.output
    return buffer.getvalue() + result.output


# --- lmgrade list ---------------------------------------------------------------------------------------


def test_list_shows_titles_as_they_are_and_variants_as_set_spells_them(monkeypatch):
    shown = printed(monkeypatch, "list")
    said = " ".join(shown.split())
    # lstm's birnn is titled "BiRNN: [h->_t ; h<-_t], ...": brackets that rich would read as markup.
    assert "[h->_t ; h<-_t]" in said
    assert "variants: pre_ln=true (true/false), positions=learned (learned/sinusoidal/rope)" in said
    assert "pre_ln=True" not in said and "True/False" not in said
    # lmgrade check --help spells them the same way.
    assert "pre_ln=true|false" in " ".join(lmgrade("check", "--help").stdout.split())


# --- tables redirected into a file ------------------------------------------------------------------------


def _report(names: list[tuple[str, str]]) -> MutantsReport:
    results = [
        MutantResult(
            Mutant(file, function, "op", 1, "a", "b", source=""), score=0.0, max_score=1.0, failed=[], named=[]
        )
        for file, function in names
    ]
    return MutantsReport("lstm", made=len(results), results=results)


def test_mutants_tables_keep_their_names_whole_when_output_is_redirected(monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=buffer, width=80, highlight=False))
    proving_commands.print_mutants_report(
        _report([("recurrent.py", "BiRNN.__init__"), ("recurrent.py", "StackedRNN.backward")])
    )
    shown = buffer.getvalue()
    assert "recurrent.py BiRNN.__init__" in shown and "recurrent.py StackedRNN.backward" in shown
    assert "…" not in shown and "killed with a named mistake" in shown
    # At a terminal of 60 columns, the names stay whole and the other columns make room.
    terminal = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=terminal, width=60, force_terminal=True, highlight=False))
    proving_commands.print_mutants_report(_report([("recurrent.py", "BiRNN.__init__")]))
    assert "recurrent.py BiRNN.__init__" in terminal.getvalue() and "…" not in terminal.getvalue()


def test_a_report_shows_what_a_submission_said_as_it_is():
    check = catalog.load("ngram")[0].checks[0]
    said = "raised ValueError: [/] closes nothing, and [bold]this[/bold] is no style"
    verdict = Verdict(check, 1, 0.0, said, cases=[(Case("c", None), CaseVerdict(False, said))])
    buffer = io.StringIO()
    print_report(Console(file=buffer, width=200, highlight=False), "ngram: [red]folder[/red]", [verdict])
    assert said in buffer.getvalue() and "ngram: [red]folder[/red]" in buffer.getvalue()


def test_a_check_paid_through_a_stand_in_shows_what_it_saw_below_the_table():
    check = catalog.load("ngram")[0].checks[1]
    note = (
        "Passes once pad is fixed: pad differs (see pad), and with the grader's pad in place of yours every "
        "case of this check passes, so it earns its points here. With your own pad, this check saw:"
    )
    saw = "case 2: count_ngrams([['a']], n=2)\n    1 of 3 values wrong"
    verdict = Verdict(check, 2, check.points, f"{note}\n{saw}", cases=[], stood_in=("pad",))
    buffer = io.StringIO()
    print_report(Console(file=buffer, width=200, highlight=False), "ngram", [verdict])
    table, _, below = buffer.getvalue().partition("└")
    assert "Passes once pad is fixed (what it saw is below)" in table and "this check saw" not in table
    assert note in below and "1 of 3 values wrong" in below


# --- counts -------------------------------------------------------------------------------------------------


def test_counts_agree_with_their_nouns():
    assert counted(1, "differing entry", "differing entries") == "1 differing entry"
    assert counted(3, "differing entry", "differing entries") == "3 differing entries"
    assert counted(0, "case") == "0 cases" and counted(1, "case") == "1 case"
    assert counted(1.0, "point") == "1 point" and counted(2.5, "point") == "2.5 points"
    assert counted(100.0, "point") == "100 points" and counted(1_000_000, "entry", "entries") == "1000000 entries"


def test_a_case_with_one_differing_entry_says_so_in_the_singular(tmp_path):
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    wrong = source.replace(
        "return [BOS] * (n - 1) + list(sentence) + [EOS]", "return [BOS] * (n - 1) + list(sentence) + [BOS]"
    )
    assert wrong != source
    (tmp_path / "ngram.py").write_text(wrong)
    shown = lmgrade("check", "ngram", tmp_path, "--case", "pad:1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "this case fails (1 differing entry," in shown.stdout, shown.stdout


def test_what_a_bundle_leaves_out_is_said_in_the_number_it_has():
    assignment, _ = catalog.load("ngram")
    checks = public.Assignment(assignment.spec, assignment.checks[:2])
    one = public.not_run_here(checks, [{"name": "perplexity_hidden", "points": 1, "why": "after due date"}])
    assert "(1 point, after due date), which is not run here" in one
    two = public.not_run_here(
        checks, [{"name": "a", "points": 10, "why": "hidden"}, {"name": "b", "points": 5, "why": "hidden"}]
    )
    assert "a (10 points, hidden), b (5 points, hidden), which are not run here" in two


# --- equal infinities ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("reveal", [True, False])
def test_equal_infinities_compare_without_a_warning(dtype, reveal):
    expected = np.array([[-np.inf, 0.5], [np.inf, -np.inf]], dtype=dtype)
    wrong = np.array([[-np.inf, 0.7], [np.inf, -np.inf]], dtype=dtype)
    tolerance = Tolerance(rtol=1e-5, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compare(expected, expected.copy(), tolerance, reveal=reveal) is None
        assert compare(float(-np.inf), float(-np.inf), tolerance, reveal=reveal) is None
        assert compare({"logprob": expected}, {"logprob": wrong}, tolerance, reveal=reveal)
        assert explains([expected], [expected.copy()], [tolerance]) and not explains([expected], [wrong], [tolerance])


# --- a student bundle's command -------------------------------------------------------------------------


@pytest.fixture
def installed_bundle(tmp_path, monkeypatch):
    """The rnn bundle of activation=tanh as installed, without its cases: what `list` and --help read."""
    assignment, variant = catalog.load(Selection("rnn", {"activation": "tanh"}))
    fixtures = describe(assignment, variant)
    fixtures.cases = {name: [] for name in fixtures.checks}
    fixtures.write(tmp_path / "rnn")
    monkeypatch.setattr(public, "installed_fixtures", lambda: {"rnn": tmp_path / "rnn"})
    monkeypatch.setattr(bundle_cli, "installed_fixtures", lambda: {"rnn": tmp_path / "rnn"})
    return assignment


def test_a_bundles_help_lists_only_the_commands_that_work_there(installed_bundle):
    shown = CliRunner().invoke(bundle_cli.group(), ["--help"])
    assert shown.exit_code == 0, shown.output
    commands = [line.split()[0] for line in shown.output[shown.output.index("Commands:") :].splitlines()[1:] if line]
    assert commands == ["check", "list"], shown.output
    assert shown.output.startswith("Usage: lmgrade ")
    for command in ("grade", "generate", "demo", "gradescope", "mutants", "regrade", "student-bundle"):
        assert command not in commands


def test_a_bundles_check_help_names_the_variant_it_checks(installed_bundle):
    shown = CliRunner().invoke(bundle_cli.group(), ["check", "--help"])
    said = " ".join(shown.output.split())
    assert shown.exit_code == 0 and "checks rnn with activation=tanh: check needs no --set, and refuses" in said
    assert "lstm (no variants): check needs no --set." in bundle_cli.variants_help({"lstm": {}})
    assert "()" not in said and "gradescope" not in said


def test_a_bundles_list_shows_its_assignment(installed_bundle, monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=buffer, width=80, highlight=False))
    shown = CliRunner().invoke(bundle_cli.group(), ["list"])
    assert shown.exit_code == 0, shown.output
    said = " ".join(buffer.getvalue().split())
    public_checks = [c for c in installed_bundle.checks if c.visibility == "visible" and c.timing is None]
    assert all(f" {c.name} " in said for c in public_checks)
    assert "variant: activation=tanh, the one this bundle checks" in said
    assert "bptt_hidden" in said and "which is not run here" in said  # the check only the autograder runs


def test_a_sampler_verdict_counts_in_the_singular_where_one_is_meant():
    # Two outcomes, one of them never drawn: one degree of freedom.
    said = fit_problem("the tokens", Counter({"a": 1000}), lambda x: 0.5, 1000, reveal=True)
    assert "on 1 degree of freedom" in said


def test_set_help_where_no_assignment_has_variants_says_so(monkeypatch):
    monkeypatch.setattr(cli.catalog, "assignment_folders", lambda: {"ngram": None})
    said = cli._variants_help()
    assert "()" not in said and "none of the assignments installed here has variants" in said
