"""What the class report finds by comparing submissions: zeros by cause, identical groups, checks earned with the
grader's components."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import ROOT
from lmgrade.course.regrade.graded import CheckScore, Graded, grade_folder
from lmgrade.course.regrade.insights import identical_groups, paid_by_stand_ins, zero_causes
from lmgrade.course.regrade.layout import Student, SubmissionFolder
from lmgrade.declare import catalog, templates


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


def _row(key: str, files_hash: str = "", zero: str = "", failed: tuple[str, ...] = (), students=(), stood_in=None):
    stood_in = stood_in or {}
    checks = tuple(
        CheckScore(name, 0.0 if name in failed else 1.0, 1.0, "", stood_in=tuple(stood_in.get(name, ())))
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


def test_checks_earned_with_stand_ins_are_counted_from_what_the_gradings_observed():
    assignment, _ = catalog.load("transformer")
    rows = [
        _row("s1", failed=("layer_norm",), stood_in={"block": ("layer_norm",), "model": ("layer_norm",)}),
        _row("s2", failed=("layer_norm", "attention"), stood_in={"model": ("layer_norm", "attention")}),
        _row("s3", failed=("attention", "block"), stood_in={"model": ("attention",)}),
        _row("s4", failed=("model",)),
        # A failed component beside a failed check is no evidence: only a stand-in run that passed counts.
        _row("s5", failed=("layer_norm", "block")),
    ]
    found = {e.check: e for e in paid_by_stand_ins(assignment, rows)}
    assert set(found) == {"block", "model"}
    model = found["model"]
    assert (model.paid, model.failed, model.together) == (3, 1, 2) and model.component in ("layer_norm", "attention")
    assert (found["block"].paid, found["block"].failed, found["block"].component) == (1, 2, "layer_norm")
    assert [e.check for e in paid_by_stand_ins(assignment, rows)] == ["model", "block"]  # most often first
    assert paid_by_stand_ins(assignment, [_row("s", failed=("layer_norm", "block", "model"))]) == []
