"""Regrading a small class in this process: the CSV, the results, resuming, failures, the report."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from helpers import ROOT, SUBMISSIONS, TEST_SECRET, shortened, validate
from lmgrade.core.errors import HarnessFault
from lmgrade.course.regrade import discover, regrade
from lmgrade.course.regrade.executor import LocalExecutor
from lmgrade.course.regrade.layout import METADATA, SubmissionFolder
from lmgrade.declare import catalog
from lmgrade.declare.flawed import write_flawed
from lmgrade.grading.submission_grading import grade_submission
from lmgrade.reports.results import HARNESS_FAULT_NOTE

# Slow: regrades classes, on a Dask cluster too.
pytestmark = pytest.mark.slow

METADATA_TEXT = """\
submission_1:
  :submitters:
  - :name: Ada Lovelace
    :email: ada@example.edu
submission_2:
  :submitters:
  - :name: Pair One
    :email: one@example.edu
  - :name: Pair Two
    :email: two@example.edu
submission_3:
  :submitters:
  - :name: Base Two
    :email: log2@example.edu
submission_10:
  :submitters:
  - :name: End Markers
    :email: eos@example.edu
submission_4:
  :submitters:
  - :name: Syntax Error
    :email: syntax@example.edu
"""


def make_class(root: Path) -> Path:
    """Six submissions in Gradescope's export layout: two right, two with named mistakes, one broken, one unlisted."""
    assignment, _ = catalog.load("ngram")
    spec = assignment.spec
    bugs = catalog.bugs("ngram")
    root.mkdir(parents=True)
    (root / METADATA).write_text(METADATA_TEXT)
    (root / "submission_1").mkdir()
    shutil.copy(ROOT / "reference" / "ngram" / "ngram.py", root / "submission_1")
    shutil.copytree(SUBMISSIONS / "ngram" / "dict_of_dicts", root / "submission_2")
    write_flawed(spec.reference_folder(), spec.files, root / "submission_3", [bugs["log_base_2"]])
    write_flawed(spec.reference_folder(), spec.files, root / "submission_10", [bugs["eos_per_order"]])
    (root / "submission_4").mkdir()
    (root / "submission_4" / "ngram.py").write_text("def pad(:\n")
    (root / "late").mkdir()
    shutil.copy(ROOT / "reference" / "ngram" / "ngram.py", root / "late")
    return root


class Counting:
    """Makes local executors and counts what they grade and which expected values they compute."""

    def __init__(self, assignment, variant, *, fail_on: str = ""):
        self.assignment, self.variant, self.fail_on = assignment, variant, fail_on
        self.graded: list[str] = []
        self.expected: list[str] = []  # the checks whose expected values were computed

    def __call__(self):
        executor = LocalExecutor(self.assignment, self.variant, jobs=2, secret=TEST_SECRET)
        grade, expected = executor.grader.grade, executor.grader.oracle.expected

        def grade_or_fail(submission, **kwargs):
            self.graded.append(Path(submission).name)
            if self.fail_on and Path(submission).name == self.fail_on:
                raise HarnessFault("the sandbox broke on this one")
            return grade(submission, **kwargs)

        def counted_expected(check, cases):
            self.expected.append(check.name)
            return expected(check, cases)

        executor.grader.grade = grade_or_fail
        executor.grader.oracle.expected = counted_expected
        return executor


def run(root: Path, out: Path, *, force: bool = False, fail_on: str = ""):
    """Regrade `root` into `out`: the summary, and what the executor did."""
    assignment, variant = catalog.load("ngram")
    counting = Counting(assignment, variant, fail_on=fail_on)
    summary = regrade(
        assignment, variant, discover(root), out / "scores.csv", make_executor=counting, secret=TEST_SECRET, force=force
    )
    return summary, counting


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    base = tmp_path_factory.mktemp("regrade")
    root = make_class(base / "class")
    # A store of its own: what the regrade computes is counted, whichever gradings of ngram ran before.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMGRADE_CACHE", str(base / "expected_store"))
        summary, counting = run(root, base / "out")
    return root, base / "out", summary, counting


def test_every_submission_gets_a_row_with_its_students(regraded):
    root, out, summary, counting = regraded
    rows = read_csv(out / "scores.csv")
    assert [r["submission"] for r in rows] == [
        "late",
        "submission_1",
        "submission_2",
        "submission_3",
        "submission_4",
        "submission_10",
    ]
    by_key = {r["submission"]: r for r in rows}
    assert by_key["submission_2"]["student"] == "Pair One; Pair Two"
    assert by_key["submission_2"]["email"] == "one@example.edu; two@example.edu"
    assert by_key["late"]["student"] == "" and by_key["late"]["score"] == "100"
    assert [by_key[k]["score"] for k in ("submission_1", "submission_2", "submission_4")] == ["100", "100", "0"]
    assert all(0 < float(by_key[k]["score"]) < 100 for k in ("submission_3", "submission_10"))
    checks = [c.name for c in catalog.load("ngram")[0].checks]
    assert list(rows[0])[5:] == [*checks, "not graded"] and all(r["max"] == "100" for r in rows)
    assert summary.graded == 6 and summary.resumed == 0 and not summary.failures
    # submission_1 holds the files of "late" (first in the layout's order), byte for byte: one grading, and
    # each row and results.json its own.
    assert sorted(counting.graded) == ["late", "submission_10", "submission_2", "submission_3", "submission_4"]
    assert (out / "results" / "late" / "results.json").read_bytes() == (
        out / "results" / "submission_1" / "results.json"
    ).read_bytes()
    assert by_key["late"]["score"] == by_key["submission_1"]["score"] == "100"
    # Every check's expected values were computed once, for the six submissions together.
    assert sorted(counting.expected) == sorted(checks)


def test_each_submission_has_the_results_json_grade_would_write(regraded, tmp_path):
    root, out, _, _ = regraded
    assignment, variant = catalog.load("ngram")
    rows = {r["submission"]: r for r in read_csv(out / "scores.csv")}
    for key in rows:
        document = json.loads((out / "results" / key / "results.json").read_text())
        validate(document)
        assert document["score"] == pytest.approx(float(rows[key]["score"]))
        assert len(document["tests"]) == len(assignment.checks)
    alone = grade_submission(assignment, variant, root / "submission_10", secret=TEST_SECRET)
    document = json.loads((out / "results" / "submission_10" / "results.json").read_text())
    assert [t["output"] for t in document["tests"]] == [v.output for v in alone.verdicts]
    assert document["score"] == pytest.approx(alone.score)


def test_resuming_grades_nothing_and_writes_the_same_csv(regraded):
    root, out, _, _ = regraded
    before = (out / "scores.csv").read_bytes(), (out / "report.html").read_bytes()
    summary, counting = run(root, out)
    assert counting.graded == [] and summary.resumed == 6 and summary.graded == 0
    assert ((out / "scores.csv").read_bytes(), (out / "report.html").read_bytes()) == before


def test_grading_everything_again_gives_identical_files(regraded, tmp_path):
    root, out, _, _ = regraded
    summary, counting = run(root, tmp_path, force=True)
    assert len(counting.graded) == 5 and summary.graded == 6  # "late", submission_1's copy, graded with it
    assert (tmp_path / "scores.csv").read_bytes() == (out / "scores.csv").read_bytes()
    assert (tmp_path / "report.html").read_bytes() == (out / "report.html").read_bytes()


def test_a_harness_fault_costs_that_row_only_and_a_changed_submission_is_graded_again(tmp_path):
    root = tmp_path / "class"
    for name in ("boom", "changed", "same"):
        (root / name).mkdir(parents=True)
        shutil.copy(ROOT / "reference" / "ngram" / "ngram.py", root / name)
    summary, counting = run(root, tmp_path / "out", fail_on="boom")
    assert summary.failures == [("boom", "HarnessFault: the sandbox broke on this one")]
    # The three hold the same files: the grading of the first failed, so the others were graded themselves.
    assert sorted(counting.graded) == ["boom", "changed", "same"]
    rows = {r["submission"]: r for r in read_csv(tmp_path / "out" / "scores.csv")}
    assert rows["same"]["score"] == "100" and rows["boom"]["score"] == "0" and rows["boom"]["pad"] == ""
    assert rows["boom"]["not graded"] == (
        "HarnessFault: the sandbox broke on this one; to do: run the same command again; if it fails again, report "
        "it to lmgrade's maintainers with the submission's results.json"
    )
    document = json.loads((tmp_path / "out" / "results" / "boom" / "results.json").read_text())
    assert document["output"].startswith(HARNESS_FAULT_NOTE) and "sandbox broke" in document["output"]
    assert "boom</td><td>HarnessFault" in (tmp_path / "out" / "report.html").read_text()

    (root / "changed" / "ngram.py").write_text("def pad(:\n")
    summary, counting = run(root, tmp_path / "out")
    # The failure is tried again, the changed one graded again, the unchanged one taken as it was.
    assert sorted(counting.graded) == ["boom", "changed"] and summary.resumed == 1 and not summary.failures
    assert [r["score"] for r in read_csv(tmp_path / "out" / "scores.csv")] == ["100", "0", "100"]


def test_the_report_shows_the_distribution_the_checks_and_the_mistakes(regraded):
    _, out, summary, _ = regraded
    html = (out / "report.html").read_text()
    assert '<svg id="histogram"' in html and html.count('<g class="bin">') == 10
    assert 'id="submissions">6<' in html and 'id="graded">6<' in html
    scores = [float(r["score"]) for r in read_csv(out / "scores.csv")]
    top = sum(s >= 90 for s in scores)  # the three right ones, and a bug that costs one check only
    assert top >= 3 and f"90–100 points: {top} submissions" in html and "0–10 points: 1 submission<" in html
    checks = html[html.index('<table id="checks">') : html.index("</table>", html.index('<table id="checks">'))]
    assert checks.count("<tr>") == 1 + len(catalog.load("ngram")[0].checks)
    pad = checks[checks.index("<td>pad</td>") :]
    # pad: the three right ones and the log2 one pass; the end markers and the syntax error fail.
    assert pad[: pad.index("</tr>")].count("4 / 6") == 1 and 'aria-label="67%"' in pad[: pad.index("</tr>")]
    mistakes = html[html.index('<table id="mistakes">') :]
    named = {c.mistake for _, g in summary.rows for c in g.checks if c.mistake}
    assert named >= {"log2", "eos_n_minus_1"}
    for name in named:
        assert f"<td>{name}</td>" in mistakes
    assert "Not graded" not in html
    # The checks the bugs' gradings paid with the grader's components, as their feedback says.
    stood_in = {c.name for _, g in summary.rows for c in g.checks if c.stood_in}
    assert stood_in and all(f"<td>{name}</td>" in html[html.index('<table id="stood-in">') :] for name in stood_in)
    # The same file twice (the reference): one group, as a hint. The syntax error: a zero of its own cause.
    identical = html[html.index('<table id="identical">') :]
    assert "<td>late, submission_1</td><td>Ada Lovelace</td>" in identical[: identical.index("</table>")]
    assert identical[: identical.index("</table>")].count("<tr>") == 2
    zeros = html[html.index('<table id="zeros">') :]
    assert "<td>syntax error or import failure</td>" in zeros and "<td>submission_4</td>" in zeros


def test_a_dask_cluster_of_two_worker_processes_gives_the_same_files(regraded, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from lmgrade.course.regrade import ExecutorError, make_executor, parse_executor

    root, out, _, _ = regraded
    assignment, variant = catalog.load("ngram")
    monkeypatch.setenv("LMGRADE_SECRET", TEST_SECRET)  # the workers inherit it, as a real cluster's must be given it
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        connection = parse_executor("dask://" + cluster.scheduler_address.removeprefix("tcp://"))
        summary = regrade(
            assignment,
            variant,
            discover(root),
            tmp_path / "scores.csv",
            secret=TEST_SECRET,
            make_executor=lambda: make_executor(connection, assignment, variant, jobs=1, secret=TEST_SECRET),
        )
        # A client whose secret differs from the workers' would get other scores: refused before grading.
        with pytest.raises(ExecutorError, match="checks or LMGRADE_SECRET differ"):
            make_executor(connection, assignment, variant, jobs=1, secret="another-secret")
    assert summary.graded == 6 and not summary.failures
    assert (tmp_path / "scores.csv").read_bytes() == (out / "scores.csv").read_bytes()
    assert (tmp_path / "report.html").read_bytes() == (out / "report.html").read_bytes()
    for key in ("submission_3", "late"):
        here, there = (
            json.loads((folder / "results" / key / "results.json").read_text()) for folder in (out, tmp_path)
        )
        assert [t["output"] for t in here["tests"]] == [t["output"] for t in there["tests"]]


def test_a_regrade_s_checks_wait_for_the_import_probe_so_an_import_that_hangs_costs_its_run_alone(tmp_path):
    """Several submissions in flight keep every slot busy: no check's run goes on beside the probe, where it would
    only spin until the probe's limit on the CPU the probe needs. The verdicts are those of a grading alone."""
    assignment, variant = catalog.load("ngram")
    fast = shortened(assignment, cpu_s=1, wall_s=1.5, wall_factor=2)
    fast = dataclasses.replace(fast, spec=dataclasses.replace(fast.spec, limits={**fast.spec.limits, "cpu_s": 1}))
    reference = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    for name, source in (("loops", reference + "\nwhile True:\n    pass\n"), ("right", reference)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ngram.py").write_text(source)
    with LocalExecutor(fast, variant, jobs=2, secret=TEST_SECRET) as executor:
        assert executor.grader.probe_first
        asked: list[tuple[str, str]] = []
        run = executor.grader.pool.run

        def counted(**kwargs):
            asked.append((Path(kwargs["submission"]).name, kwargs["scenario"]))
            return run(**kwargs)

        executor.grader.pool.run = counted
        graded = {s.key: g for s, g in executor.grade([SubmissionFolder("loops", tmp_path / "loops")])}
        assert [scenario for _, scenario in asked] == ["lmgrade.submissions.loader:import_probe"]
        assert all("could not be imported: it ran past its time limit" in c.output for c in graded["loops"].checks)
        graded = {s.key: g for s, g in executor.grade([SubmissionFolder("right", tmp_path / "right")])}
        assert graded["right"].score == 100 and asked[1][1] == "lmgrade.submissions.loader:import_probe"


def test_where_the_gpu_checks_run_is_part_of_the_grading_fingerprint():
    from lmgrade.course.regrade.content import grading_fingerprint

    unbound, variant = catalog.load("transformer")
    on_cpu = unbound.on("cpu")
    # A Dask client binds nothing: its fingerprint names the device it asks of the workers.
    assert unbound.device is None and {c.device for c in unbound.checks} == {"cpu", "cuda"}
    assert on_cpu.device == "cpu" and {c.device for c in on_cpu.checks} == {"cpu"}
    asked = {device: grading_fingerprint(unbound, variant, TEST_SECRET, device) for device in ("auto", "cpu", "cuda")}
    assert len({*asked.values(), grading_fingerprint(on_cpu, variant, TEST_SECRET)}) == 4
    assert grading_fingerprint(on_cpu, variant, TEST_SECRET) == grading_fingerprint(
        catalog.load("transformer")[0].on("cpu"), variant, TEST_SECRET
    )
