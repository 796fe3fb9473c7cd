"""A submission that cannot be imported is told so once, at the top, in its own terms."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lmgrade.boundary.schema import case_result
from lmgrade.declare.checks import CaseVerdict
from lmgrade.grading.import_probe import ImportProbe
from lmgrade.grading.submission_grading import grade_submission
from lmgrade.sandbox.pool import RunReport

ROOT = Path(__file__).resolve().parents[1]
PAD = "def pad(sentence: list[str], n: int) -> list[str]:"


def _submission(folder: Path, source: str, **helpers: str) -> Path:
    folder.mkdir()
    (folder / "ngram.py").write_text(source)
    for name, text in helpers.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def _grade(ngram, ngram_grader, folder: Path, tmp_path: Path):
    assignment, variant = ngram
    results = tmp_path / "results.json"
    run = grade_submission(assignment, variant, folder, results=results, grader=ngram_grader)
    return run, json.loads(results.read_text())


def _said_once(document: dict, *words: str) -> None:
    top = document["output"]
    assert all(word in top for word in words), top
    for test in document["tests"]:
        assert test["output"] == "not graded: ngram.py could not be imported (see above)", test["output"]
        assert test["score"] == 0
    everything = json.dumps(document)
    assert "/tmp" not in everything and "autograder" not in everything and "site-packages" not in everything


def test_a_syntax_error_shows_the_file_line_and_caret_once(ngram, ngram_grader, tmp_path):
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text().replace(PAD, PAD.replace("],", "]"))
    run, document = _grade(ngram, ngram_grader, _submission(tmp_path / "s", source), tmp_path)
    line = source.splitlines().index(PAD.replace("],", "]")) + 1
    _said_once(document, 'File "ngram.py", line %d' % line, "def pad(sentence: list[str] n: int)", "^", "SyntaxError")
    assert document["output"].count("SyntaxError") == 1 and run.score == 0


def test_an_exception_in_a_helper_module_shows_only_the_students_frames(ngram, ngram_grader, tmp_path):
    source = (ROOT / "reference/ngram/ngram.py").read_text()
    folder = _submission(
        tmp_path / "s",
        source + "from helpers import table\n",
        helpers="def build():\n    return {}['missing']\n\ntable = build()\n",
    )
    _, document = _grade(ngram, ngram_grader, folder, tmp_path)
    _said_once(
        document,
        f'File "ngram.py", line {len(source.splitlines()) + 1}',
        'File "helpers.py", line 4',
        'File "helpers.py", line 2',
        "KeyError: 'missing'",
    )


def test_an_empty_file_is_an_import_that_defines_nothing(ngram, ngram_grader, tmp_path):
    folder = _submission(tmp_path / "s", "")
    run, document = _grade(ngram, ngram_grader, folder, tmp_path)
    assert run.score == 0
    pad = document["tests"][0]["output"]
    assert "has no attribute 'pad'" in pad and "ngram.py must define: " in pad and "pad" in pad.split("must define")[1]
    assert "it defines: nothing public" in pad


def test_a_missing_name_says_what_the_file_defines_and_the_contract_wants(ngram, ngram_grader, tmp_path):
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text().replace("def pad(", "def padding(")
    run, document = _grade(ngram, ngram_grader, _submission(tmp_path / "s", source), tmp_path)
    pad = document["tests"][0]["output"]
    assert "has no attribute 'pad'" in pad and "padding" in pad.split("it defines:")[1]


def test_the_files_are_imported_once_per_version_when_checks_are_asked_one_at_a_time(
    ngram_grader, tmp_path, monkeypatch
):
    """A bundle's pytest grades one check per test: one import probe for them all, a new one after an edit."""
    probed = []
    probe = ngram_grader.imports._probe
    monkeypatch.setattr(ngram_grader.imports, "_probe", lambda *args: probed.append(args) or probe(*args))
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    folder = _submission(tmp_path / "s", source + "\nraise ValueError('x')\n")
    for name in ("pad", "fit"):
        (verdict,) = ngram_grader.grade(folder, only={name})
        assert not verdict.passed and "could not be imported" in verdict.output
    assert len(probed) == 1
    # Content no other test grades: the grader is shared, and keeps the probes of what it graded before.
    (folder / "ngram.py").write_text(source + "\n# the import error fixed\n")
    (verdict,) = ngram_grader.grade(folder, only={"pad"})
    assert verdict.passed, verdict.output
    assert len(probed) == 2


def test_the_import_probe_runs_beside_the_first_checks_and_its_failure_is_told_before_any_verdict(
    tmp_path, monkeypatch
):
    import threading

    from helpers import TEST_SECRET
    from lmgrade.declare import catalog
    from lmgrade.grading.grader import Grader
    from lmgrade.grading.oracle import LiveReference

    assignment, variant = catalog.load("ngram")
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "ngram.py").write_text("import nonexistent_module_of_the_student\n")
    heard: list[str] = []
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=2) as grader:
        a_check_started = threading.Event()
        run = grader.pool.run

        def recording(**kw):
            if kw["scenario"] == "lmgrade.submissions.loader:import_probe":
                # Held until a check's run starts: one starts only if the checks do not wait for the probe.
                assert a_check_started.wait(10), "no check ran beside the import probe"
            else:
                a_check_started.set()
            return run(**kw)

        monkeypatch.setattr(grader.pool, "run", recording)
        verdicts = grader.grade(
            submission,
            on_import_failure=lambda message: heard.append("import: " + message),
            on_verdict=lambda verdict: heard.append("verdict"),
        )
    assert heard[0].startswith("import: ") and "nonexistent_module_of_the_student" in heard[0]
    assert heard[1:] == ["verdict"] * len(verdicts) and not any(v.passed for v in verdicts)
    assert all("could not be imported" in v.output for v in verdicts if "ngram.py" in v.check.files)


def test_a_probe_that_sends_its_names_as_anything_but_identifiers_gets_a_hint_all_the_same(ngram, tmp_path):
    """The probe's answer is the child's claim: names sent as ints, nested lists or null (ints made a TypeError
    of the grading process's hint) are dropped, as is a module that is not the submission's; the hint says
    what is left."""

    class _ForgingPool:  # the child of the probe's run, writing its own result
        def run(self, **_):
            text = b'{"$dict": [["ok", {"$dict": [["ngram", [1, ["x"], null, "count_ngrams", "1a"]], [2, [3]]]}]]}'
            return RunReport(outcomes=[case_result(len(text).to_bytes(8, "big") + text)])

    probe = ImportProbe(*ngram, _ForgingPool())
    imports = probe.probe(_submission(tmp_path / "s", "def padded(sentence, n):\n    return sentence\n"))
    assert imports.defined == {"ngram": ["count_ngrams"]}
    hinted = probe.with_hints(CaseVerdict(False, "module 'ngram' has no attribute 'pad'"), imports.defined)
    assert "ngram.py must define: " in hinted.message and "it defines: count_ngrams" in hinted.message


def test_an_import_error_names_no_folder_of_the_grading_machine(ngram, ngram_grader, tmp_path):
    """numpy's ImportError quotes the path of numpy's own __init__.py: the feedback names it as the libraries'
    folder, never the machine's own Python installation."""
    import numpy

    source = (ROOT / "reference/ngram/ngram.py").read_text()
    folder = _submission(tmp_path / "s", source + "from numpy import no_such_function_here\n")
    _, document = _grade(ngram, ngram_grader, folder, tmp_path)
    everything = json.dumps(document)
    assert "no_such_function_here" in everything
    for folder_of_the_machine in (str(Path(numpy.__file__).parents[1]), sys.prefix, sys.base_prefix):
        assert folder_of_the_machine not in everything
    assert "<libraries>/numpy/__init__.py" in everything
