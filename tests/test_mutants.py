"""`lmgrade mutants`: a seeded sample in the suite; the full run, `python3 dev.py mutants`, is a benchmark."""

from __future__ import annotations

import json

import pytest

from helpers import TEST_SECRET, lmgrade, study_unless
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog
from lmgrade.prove import mutants
from lmgrade.prove.mutants import all_mutants, label, load_equivalents, run_mutants

# Slow: grades samples of mutants.
pytestmark = pytest.mark.slow

# The suite lists ngram's equivalent mutants and grades two of its mutants through the command; the study
# grades a sample of every assignment's.
SUITE = {"ngram"}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=study_unless(name in SUITE)) for name in catalog.assignment_folders()]
)
def test_every_listed_equivalent_is_a_mutant_of_the_reference(name):
    assignment, _ = catalog.load(name)
    made = {label(m) for m in all_mutants(assignment)}
    listed = load_equivalents(name)
    assert not set(listed) - made, "listed as equivalent, but no such mutant"


# Reference functions that only another variant than the default runs: a mutant of one is that
# variant's to kill (a mutant is scored in the variant it is graded in), so it is sampled there.
VARIANT_ONLY = {"transformer": {"rotate": {"positions": "rope"}, "sinusoidal_table": {"positions": "sinusoidal"}}}


# Fewer of the transformer's, whose gradings cost the most (its full run is the benchmark's).
SAMPLED = {"transformer": 4}


def _sample_params():
    params = [
        pytest.param(name, {}, None, SAMPLED.get(name, 6), id=name, marks=study_unless(False))
        for name in catalog.assignment_folders()
    ]
    for name, functions in VARIANT_ONLY.items():
        for function, settings in functions.items():
            params.append(pytest.param(name, settings, function, 2, id=f"{name}-{function}", marks=study_unless(False)))
    return params


@pytest.mark.parametrize("name,settings,function,count", _sample_params())
def test_a_seeded_sample_of_mutants_is_killed(name, settings, function, count):
    assignment, variant = catalog.load(Selection(name, settings))
    # Without the timing checks, which time dozens of calls per grading, and the 300-step training run:
    # a mutant is a wrong answer, for the numeric checks to find (the full run grades them all).
    assignment = type(assignment)(
        assignment.spec, [c for c in assignment.checks if c.timing is None and c.name != "training"]
    )
    only_elsewhere = set(VARIANT_ONLY.get(name, {}))
    report = run_mutants(
        assignment,
        variant,
        jobs=2,
        max_mutants=count,
        seed=20261123,
        secret=TEST_SECRET,
        select=lambda m: m.function == function if function else m.function not in only_elsewhere,
    )
    assert len(report.results) == count and report.made > count
    assert not report.survivors, [r.mutant.diff() for r in report.survivors]
    assert not report.killed_but_listed
    tally = report.tally()["all"]
    assert tally.total == count and tally.killed + tally.equivalent == count


def test_a_survivor_off_the_list_is_news(monkeypatch):
    assignment, variant = catalog.load("ngram")
    listed = load_equivalents("ngram")
    first = next(iter(listed))
    monkeypatch.setattr(mutants, "load_equivalents", lambda name: {})
    report = run_mutants(assignment, variant, select=lambda m: label(m) == first, secret=TEST_SECRET)
    (result,) = report.results
    assert not result.killed and report.survivors == [result]
    assert report.tally()["all"].score == 0.0


def test_the_command_prints_the_score_and_writes_a_report(tmp_path):
    out = lmgrade("mutants", "ngram", "--max", "2", "--seed", "3", "-o", tmp_path / "report.json")
    assert out.returncode == 0, out.stderr
    assert "mutation score" in out.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["graded"] == 2 and report["made"] > 100 and set(report["overall"]) >= {"killed", "score"}


@pytest.mark.study
@pytest.mark.parametrize("selection", catalog.variants("rnn"), ids=lambda s: s.describe() or "default")
def test_every_variant_grades_both_activations(selection):
    # tanh's derivative is part of the contract in every course: each variant's own
    # grading kills this mutant, the default (sigmoid) one included.
    assignment, variant = catalog.load(selection)
    wanted = "lambda h: 1.0 + h**2"

    def select(mutant):
        return mutant.function == "<module>" and wanted in mutant.after

    (result,) = run_mutants(assignment, variant, select=select, secret=TEST_SECRET).results
    assert result.killed and result.variant == variant
    assert {"elman_backward", "rnnlm"} <= set(result.failed)
