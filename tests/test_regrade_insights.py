"""What the class report finds by comparing submissions: zeros by cause, identical groups, explained failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import ROOT
from lmgrade import catalog, templates
from lmgrade.regrade.graded import CheckScore, Graded, grade_folder
from lmgrade.regrade.insights import (
    components,
    explained_failures,
    identical_groups,
    zero_causes,
)
from lmgrade.regrade.layout import Student, SubmissionFolder


@pytest.mark.parametrize(
    "make, cause",
    [("stub", "stub"), ("syntax", "import"), ("misnamed", "missing"), ("empty", "missing"), ("constants", "wrong")],
)
def test_a_zero_is_put_down_to_its_cause(ngram, ngram_grader, tmp_path, make, cause):
    assignment, variant = ngram
    folder = tmp_path / "submission"
    folder.mkdir()
    if make == "stub":
        templates.generate(assignment, variant, folder)
    elif make == "syntax":
        (folder / "ngram.py").write_text("def pad(:\n")
    elif make == "misnamed":
        shutil.copyfile(ROOT / "reference" / "ngram" / "ngram.py", folder / "ngram_final.py")
    elif make == "constants":
        stub = templates.render(assignment, variant)["ngram.py"]
        (folder / "ngram.py").write_text(stub.replace("raise NotImplementedError", "return None"))
    graded = Graded.from_dict(grade_folder(ngram_grader, assignment, variant, folder))
    assert graded.score == 0 and graded.zero_cause == cause, graded.note


def test_a_score_above_zero_has_no_cause_and_the_same_files_hash_the_same(ngram, ngram_grader, tmp_path):
    for name, extra in (("a", "notes"), ("b", "other notes")):
        (tmp_path / name).mkdir()
        shutil.copyfile(ROOT / "reference" / "ngram" / "ngram.py", tmp_path / name / "ngram.py")
        (tmp_path / name / "README.md").write_text(extra)  # not graded: not part of the hash
    a, b = (Graded.from_dict(grade_folder(ngram_grader, *ngram, tmp_path / n)) for n in "ab")
    assert a.score == 100 and a.zero_cause == "" and a.files_hash and a.files_hash == b.files_hash


def _row(key: str, files_hash: str = "", zero: str = "", failed: tuple[str, ...] = (), students=()):
    checks = tuple(
        CheckScore(name, 0.0 if name in failed else 1.0, 1.0, "")
        for name in ("layer_norm", "attention", "block", "model", "attention_speed")
    )
    return (
        SubmissionFolder(key, Path(key), tuple(Student(s) for s in students)),
        Graded(checks, files_hash=files_hash, zero_cause=zero),
    )


def test_identical_groups_are_listed_largest_first_without_untouched_stubs():
    rows = [
        _row("s1", "h1", students=("Ann",)),
        _row("s2", "h2"),
        _row("s3", "h1", students=("Bo",)),
        _row("s4", "stub", "stub"),
        _row("s5", "stub", "stub"),
        _row("s6", "h2"),
        _row("s7", "h2"),
        _row("s8", ""),
    ]
    groups = identical_groups(rows)
    assert [g.submissions for g in groups] == [("s2", "s6", "s7"), ("s1", "s3")]
    assert groups[1].students == ("Ann", "Bo")
    causes = zero_causes(rows)
    assert [(z.cause, z.submissions) for z in causes] == [("stub", ("s4", "s5"))]


def test_a_checks_failures_are_put_down_to_the_component_that_failed_beside_it():
    assignment, _ = catalog.load("transformer")
    built_on = components(assignment)
    assert built_on["model"][:1] == ["layer_norm"] and "block" in built_on["model"]
    assert "model" not in built_on["layer_norm"] and "attention_speed" not in built_on["model"]
    # rnn's checks name no `uses`: what their scenarios take from `modules` decides. The reference's
    # elman.py imports nothing of modules.py, so a failing softmax explains no Elman check.
    rnn, _ = catalog.load("rnn")
    rnn_built_on = components(rnn)
    assert not any(rnn_built_on[name] for name in ("elman_forward", "elman_backward", "rnnlm", "train"))
    # A property check of both files' modules (backward twice, of Linear and of the RNN) builds on both.
    assert {"linear", "elman_backward"} <= set(rnn_built_on["repeatable_backward"])
    rows = [
        _row("s1", failed=("layer_norm", "block", "model")),
        _row("s2", failed=("layer_norm", "block", "model")),
        _row("s3", failed=("model",)),
        _row("s4", failed=("attention", "block", "model")),
        # Nothing compared: a stub fails everything together and explains nothing.
        _row("s5", zero="stub", failed=("layer_norm", "attention", "block", "model")),
    ]
    found = explained_failures(assignment, rows)
    explained = {e.check: e for e in found}
    # model failed 4 times, 3 of them beside a component; the most basic one that failed: layer_norm twice.
    model = explained["model"]
    assert (model.failed, model.explained, model.component, model.together) == (4, 3, "layer_norm", 2)
    assert explained["block"].component == "layer_norm" and explained["block"].share == pytest.approx(2 / 3)
    assert "layer_norm" not in explained and "attention" not in explained
    assert found[0].check == "block"  # the most explained first
