"""Per-student hidden inputs: each student's hidden cases are their own, public cases everyone's, scores stable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import ROOT, TEST_SECRET, shortened
from lmgrade.boundary import wire
from lmgrade.core.hidden_inputs import (
    COURSE,
    HiddenInputs,
    hidden_inputs,
    identity_of_option,
    per_student_asked,
    student_identity,
)
from lmgrade.core.seeds import check_rng, derive_seed
from lmgrade.core.selection import Selection
from lmgrade.course.gradescope import grade as gradescope_grade
from lmgrade.course.gradescope.config import CheckEntry, ZipConfig
from lmgrade.course.gradescope.layout import ROOT_ENV
from lmgrade.course.gradescope.metadata import METADATA, read_submitters
from lmgrade.course.regrade import discover, regrade
from lmgrade.course.regrade.executor import LocalExecutor
from lmgrade.course.regrade.layout import METADATA as EXPORT_METADATA
from lmgrade.course.regrade.layout import Student, read_metadata
from lmgrade.declare import catalog
from lmgrade.declare.assignment import AssignmentError, load_assignment
from lmgrade.declare.checks import CaseContext
from lmgrade.grading.expected_store import ExpectedStore
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.grading.per_student import StudentGrader, for_student, is_hidden
from lmgrade.grading.submission_grading import grade_submission

ADA = "ada@example.edu"
GRACE = "grace@example.edu"
REFERENCE = ROOT / "reference" / "ngram" / "ngram.py"
# A bug the hidden perplexity check catches, so a student's score there depends on the cases drawn.
BUG = "perplexity_mean_of_sentences"


def drawn(cases) -> bytes:
    """The cases' inputs as bytes: equal exactly when the inputs are."""
    return wire.encode([[case.label, case.args] for case in cases])


def student(identity: str) -> HiddenInputs:
    return hidden_inputs(TEST_SECRET, identity, True)


def results_output(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["output"]


# -- who a student is ---------------------------------------------------------------------------------------


def test_a_groups_identity_is_the_same_whoever_submits_and_however_emails_are_written():
    one = student_identity([Student("Pair One", "One@Example.edu"), Student("Pair Two", "two@example.edu ")])
    other = student_identity([Student("Pair Two", "two@example.edu"), Student("Pair One", "one@example.edu")])
    assert one == other == "one@example.edu,two@example.edu"
    assert student_identity([Student("No Email", "", "s123")]) == "sid:s123"
    assert student_identity([]) is None and student_identity([Student("Nameless")]) is None
    # grade --student names a student as Gradescope and the export do.
    assert identity_of_option("two@example.edu, ONE@example.edu") == one
    assert identity_of_option("s123") == identity_of_option("sid:s123") == "sid:s123"


def test_gradescopes_metadata_and_the_exports_name_a_student_alike(tmp_path):
    (tmp_path / METADATA).write_text(
        json.dumps(
            {
                "id": 987,
                "users": [
                    {"email": "Two@example.edu", "id": 2, "name": "Pair Two", "sid": "2"},
                    {"email": "one@example.edu", "id": 1, "name": "Pair One", "sid": "1"},
                ],
            }
        )
    )
    (tmp_path / EXPORT_METADATA).write_text(
        "submission_1:\n  :submitters:\n  - :name: Pair One\n    :email: one@example.edu\n"
        "  - :name: Pair Two\n    :email: two@example.edu\n"
    )
    from_gradescope = student_identity(read_submitters(tmp_path / METADATA))
    from_export = student_identity(read_metadata(tmp_path / EXPORT_METADATA)["submission_1"])
    assert from_gradescope == from_export == "one@example.edu,two@example.edu"
    (tmp_path / "broken.json").write_text("{not json")
    assert read_submitters(tmp_path / "broken.json") == () and read_submitters(tmp_path / "absent.json") == ()


def test_a_students_seed_comes_from_the_secret_and_is_shown_only_as_a_short_hash():
    ada = student(ADA)
    assert ada.seed == derive_seed(TEST_SECRET, "student", ADA)
    assert ada.seed != hidden_inputs("another course", ADA, True).seed  # unguessable without the secret
    assert ada.tag != student(GRACE).tag and len(ada.tag) == 12
    assert ada.line() == f"hidden inputs drawn for student {ada.tag}"
    assert f"{ada.seed:x}"[:8] not in ada.line() and TEST_SECRET not in ada.line()
    unknown = hidden_inputs(TEST_SECRET, None, True)
    assert unknown.secret is None and unknown.tag == COURSE and "course's hidden inputs" in unknown.line()
    off = hidden_inputs(TEST_SECRET, ADA, False)
    assert off.secret is None and off.line() is None


def test_assignment_toml_asks_for_per_student_inputs(tmp_path):
    folder = tmp_path / "ngram"
    shutil.copytree(ROOT / "assignments" / "ngram", folder)
    toml = folder / "assignment.toml"
    assert load_assignment(toml).hidden_inputs == COURSE
    text = toml.read_text()
    toml.write_text(text.replace('files = ["ngram.py"]', 'files = ["ngram.py"]\nhidden_inputs = "per_student"'))
    spec = load_assignment(toml)
    assert spec.hidden_inputs == "per_student" and per_student_asked(spec.hidden_inputs, False)
    assert per_student_asked(COURSE, True) and not per_student_asked(COURSE, False)
    toml.write_text(text.replace('files = ["ngram.py"]', 'files = ["ngram.py"]\nhidden_inputs = "each"'))
    with pytest.raises(AssignmentError, match="hidden_inputs"):
        load_assignment(toml)


# -- what a student is graded on ------------------------------------------------------------------------


def test_two_students_hidden_cases_differ_and_their_public_cases_are_everyones(ngram_grader):
    ada, grace = for_student(ngram_grader, student(ADA)), for_student(ngram_grader, student(GRACE))
    hidden = [c for c in ngram_grader.assignment.checks if is_hidden(c)]
    public = [c for c in ngram_grader.assignment.checks if not is_hidden(c)]
    assert [c.name for c in hidden] == ["perplexity_hidden"] and public
    for check in hidden:
        course = drawn(ngram_grader.cases(check))
        assert len({course, drawn(ada.cases(check)), drawn(grace.cases(check))}) == 3
        # Drawn as the check's own cases(ctx) draws them, from the student's seed.
        rng = check_rng(student(ADA).secret, ngram_grader.assignment.name, check.name)
        own = check.make_cases(CaseContext(rng=rng, variant=ngram_grader.variant, device=check.device))
        assert drawn(own) == drawn(ada.cases(check))
        assert drawn(for_student(ngram_grader, student(ADA)).cases(check)) == drawn(ada.cases(check))
    for check in public:
        assert drawn(ada.cases(check)) == drawn(grace.cases(check)) == drawn(ngram_grader.cases(check))


def test_per_student_off_or_no_identity_grades_as_today(ngram_grader):
    assert for_student(ngram_grader, None) is ngram_grader
    assert for_student(ngram_grader, hidden_inputs(TEST_SECRET, ADA, False)) is ngram_grader
    assert for_student(ngram_grader, hidden_inputs(TEST_SECRET, None, True)) is ngram_grader
    # A view of a view grades for the student it is asked for, with the course's grader underneath.
    view = for_student(for_student(ngram_grader, student(ADA)), student(GRACE))
    assert isinstance(view, StudentGrader) and view.shared is ngram_grader


def test_one_student_graded_three_times_gets_one_score_and_one_seed_line(ngram, buggy, tmp_path, monkeypatch):
    assignment, variant = ngram
    ada = student(ADA)
    computed = []  # the hidden check's cases whose expected values the reference computed
    with Grader(
        shortened(assignment, cpu_s=10, wall_s=15),
        variant,
        LiveReference(assignment.spec),
        secret=TEST_SECRET,
        jobs=1,
        store=ExpectedStore(tmp_path / "store"),
    ) as grader:
        hidden_check = next(c for c in grader.assignment.checks if is_hidden(c))
        expected = grader.oracle.expected

        def counting(check, cases):
            if check.name == hidden_check.name:
                computed.append(drawn(cases))
            return expected(check, cases)

        monkeypatch.setattr(grader.oracle, "expected", counting)
        runs = []
        for n in range(3):
            results = tmp_path / f"results_{n}.json"
            run = grade_submission(assignment, variant, buggy[BUG], grader=grader, results=results, hidden=ada)
            runs.append((run.score, results_output(results).splitlines()[0], run.note.splitlines()[0]))
        own_cases = drawn(for_student(grader, ada).cases(hidden_check))
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0] < sum(c.points for c in assignment.checks)  # the bug loses points, the same every time
    assert runs[0][1] == runs[0][2] == f"hidden inputs drawn for student {ada.tag}"
    # This seed's expected values were computed once, then found in the store, keyed by its cases.
    assert computed == [own_cases]


def test_a_hidden_check_earned_with_a_stand_in_runs_on_each_students_own_cases(ngram_grader, buggy):
    # logprob in base 2: perplexity_hidden fails beside it, and passes with the grader's logprob in its place,
    # on the cases (and the reference's recorded calls) of whoever is graded, after the others on one grader.
    grader = ngram_grader
    for hidden in (hidden_inputs(TEST_SECRET, None, False), student(GRACE), student(ADA)):
        run = grade_submission(grader.assignment, grader.variant, buggy["log_base_2"], grader=grader, hidden=hidden)
        verdict = next(v for v in run.verdicts if is_hidden(v.check))
        assert verdict.passed and verdict.stood_in == ("logprob",), (hidden.tag, verdict.output)


def test_the_reference_scores_full_marks_under_any_identity(ngram_grader, reference_submission):
    for hidden in (student(ADA), student(GRACE), hidden_inputs(TEST_SECRET, None, True)):
        grader = ngram_grader
        run = grade_submission(grader.assignment, grader.variant, reference_submission, grader=grader, hidden=hidden)
        assert run.score == run.max_score > 0, [v.output for v in run.verdicts if not v.passed]
        assert run.note.splitlines()[0] == hidden.line()


def test_a_public_only_grading_says_nothing_of_hidden_inputs(ngram_grader, reference_submission):
    grader = ngram_grader
    run = grade_submission(
        grader.assignment,
        grader.variant,
        reference_submission,
        grader=grader,
        visible_only=True,
        hidden=student(ADA),
    )
    assert "hidden inputs" not in run.note and run.score == run.max_score


# -- where a student is known ---------------------------------------------------------------------------


def test_gradescope_grades_each_submitter_on_their_own_hidden_inputs(tmp_path, monkeypatch, ngram):
    assignment, variant = ngram
    config = ZipConfig(
        selection=Selection.parse("ngram", ()),
        secret=TEST_SECRET,
        public_secret=False,
        checks=[CheckEntry(c.name, c.title, c.points, c.visibility) for c in assignment.checks],
        time_budget_s=300,
        lmgrade_version="test",
        wheel="lmgrade.whl",
        wheel_sha256="-",
        variant=dict(variant),
        per_student=True,
    )
    config_path = tmp_path / "config.json"
    config_path.write_text(config.to_json())
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    shutil.copy(REFERENCE, root / "submission")
    users = [{"email": GRACE, "id": 7, "name": "Grace Hopper", "sid": "7"}]
    (root / METADATA).write_text(json.dumps({"id": 1, "users": users}))
    monkeypatch.setenv(ROOT_ENV, str(root))
    monkeypatch.setattr(gradescope_grade, "default_jobs", lambda: 1)  # the suite's machine is shared
    assert gradescope_grade.main(["--config", str(config_path)]) == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["output"].splitlines()[0] == f"hidden inputs drawn for student {student(GRACE).tag}"
    assert results["score"] == sum(c.points for c in assignment.checks)
    assert TEST_SECRET not in json.dumps(results)
    # The reference computed the student's hidden expected values there, into the zip's store.
    assert list((root / "source" / "expected").rglob("*.wire"))


def test_a_regrade_says_which_seed_each_submission_was_graded_with(tmp_path, ngram):
    assignment, variant = ngram
    bound = assignment.on("cpu")
    root = tmp_path / "export"
    for key in ("submission_1", "submission_2", "submission_3"):
        (root / key).mkdir(parents=True)
        shutil.copy(REFERENCE, root / key)
    (root / EXPORT_METADATA).write_text(
        f"submission_1:\n  :submitters:\n  - :name: Ada\n    :email: {ADA}\n"
        f"submission_2:\n  :submitters:\n  - :name: Grace\n    :email: {GRACE}\n"
    )
    csv_path = tmp_path / "out" / "scores.csv"
    csv_path.parent.mkdir()
    summary = regrade(
        bound,
        variant,
        discover(root),
        csv_path,
        secret=TEST_SECRET,
        per_student=True,
        make_executor=lambda: LocalExecutor(bound, variant, jobs=2, secret=TEST_SECRET, per_student=True),
    )
    header, *rows = [line.split(",") for line in csv_path.read_text().splitlines()]
    assert header[:6] == ["submission", "student", "email", "seed", "score", "max"]
    seeds = {row[0]: row[3] for row in rows}
    assert seeds == {"submission_1": student(ADA).tag, "submission_2": student(GRACE).tag, "submission_3": COURSE}
    assert all(row[4] == row[5] for row in rows)  # the reference, full marks whatever the seed
    for key, seed in seeds.items():
        output = results_output(summary.results / key / "results.json")
        assert output.splitlines()[0] == (
            f"hidden inputs drawn for student {seed}" if seed != COURSE else hidden_inputs("", None, True).line()
        )
    report = summary.report.read_text()
    assert 'id="seeds"' in report and all(seed in report for seed in seeds.values())
    assert any("submission_3" in note and "course's hidden inputs" in note for note in summary.notes)


def test_a_regrade_without_per_student_inputs_has_no_seed_column(tmp_path, ngram):
    from lmgrade.course.regrade.scores_csv import scores_table

    assignment, _ = ngram
    assert "seed" not in scores_table(assignment.checks, [])[0]
    assert scores_table(assignment.checks, [], {})[0][3] == "seed"
    assert catalog.load("ngram")[0].spec.hidden_inputs == COURSE


def test_the_student_bundle_is_unaffected(ngram):
    from lmgrade.course.bundle.fixtures import describe

    assignment, variant = ngram
    recorded = describe(assignment, variant)
    assert "hidden_inputs" not in recorded.spec
    assert not any(is_hidden(check) for check in assignment.checks if check.name in recorded.checks)


def test_a_dask_worker_draws_the_students_inputs_from_its_own_secret(monkeypatch, ngram):
    from lmgrade.course.regrade import cluster
    from lmgrade.course.regrade.content import grading_fingerprint, read_files

    monkeypatch.setenv("LMGRADE_SECRET", TEST_SECRET)
    monkeypatch.setattr(cluster, "_graders", {})  # this test's grader only, closed below
    assignment, variant = ngram
    selection = Selection.of("ngram", variant).as_dict()
    fingerprint = grading_fingerprint(assignment, variant, TEST_SECRET, "cpu")
    files = read_files(REFERENCE.parent)
    try:
        graded = cluster.grade_on_worker(selection, "cpu", fingerprint, files, identity_of_option(ADA), True)
    finally:
        for grader, *_ in cluster._graders.values():
            grader.close()
    assert not graded.get("error"), graded.get("error")
    assert graded["note"].splitlines()[0] == student(ADA).line()
