"""The class report's review queue: every submission that needs a person, one line saying why, a link to its
feedback; read from the feedback the checks wrote, never changing a score."""

from __future__ import annotations

import re
from pathlib import Path

from disguise import reformatted, renamed

from helpers import ROOT, SUBMISSIONS
from lmgrade import Case, Check, Tolerance, catalog, templates
from lmgrade.feedback import FORBIDDEN_HIDDEN, forbidden_message, summarize
from lmgrade.regrade.graded import CheckScore, Graded
from lmgrade.regrade.insights import identical_groups
from lmgrade.regrade.layout import Student, SubmissionFolder
from lmgrade.regrade.near_duplicates import NearDuplicate
from lmgrade.regrade.report import render_report
from lmgrade.regrade.review_queue import review_queue
from lmgrade.speed import Timing
from lmgrade.timing_grading import Laps, judge_case


def _timing_output(student_seconds: float) -> str:
    """What a timing check's feedback says of laps this fast, against a reference's of 10 ms (as graded)."""
    check = Check(
        "speed",
        "a timed call",
        scenario=lambda m, a: None,
        make_cases=lambda ctx: [],
        tolerance=Tolerance(rtol=1e-3, atol=1e-3),
        timing=Timing(setup=lambda m, a: None, step=lambda s, n: [0.0], warmup=1, laps=4, rounds=2),
    )

    def laps(seconds: float) -> Laps:
        return Laps([seconds] * 8, [(i, [float(i)]) for i in range(10)])

    case = Case("x", {})
    verdict = judge_case(check, case, laps(0.01), laps(student_seconds), lambda n: [float(n)], "cpu")
    return summarize([(case, verdict)], reveal=False)


def _row(key: str, outputs: dict[str, str] | None = None, error: str = "", files_hash: str = "", students=()):
    """A transformer submission whose checks all pass but those given a (failing) output."""
    outputs = outputs or {}
    assignment, _ = catalog.load("transformer")
    checks = tuple(
        CheckScore(c.name, 0.0 if c.name in outputs else c.points, c.points, outputs.get(c.name, "all passed"))
        for c in assignment.checks
    )
    return (
        SubmissionFolder(key, Path(key), tuple(Student(name) for name in students)),
        Graded(() if error else checks, error=error, files_hash=files_hash),
    )


def test_each_submission_that_needs_a_person_is_listed_once_with_every_reason_on_one_line():
    assignment, _ = catalog.load("transformer")
    used = forbidden_message(["torch.nn.functional.layer_norm"], " in layers.py line 3 (`F.layer_norm(x, s)`)")
    rows = [
        _row("clean"),
        _row("forbidden", {"layer_norm": used, "block": f"{used}\nsomething else"}, students=("Ada",)),
        _row("hidden forbidden", {"model": FORBIDDEN_HIDDEN}),
        _row("fast", {"attention_speed": _timing_output(0.0005)}),
        _row("slow", {"attention_speed": _timing_output(0.05)}),  # too slow: a failure, nothing to review
        _row("the same words", {"layer_norm": "flagged for review by the course staff"}),  # not a timing check
        _row("broken", error="HarnessFault: the sandbox broke"),
        _row("twin_a", files_hash="h"),
        _row("twin_b", files_hash="h"),
        _row("near_a"),
        _row("near_b"),
    ]
    near = [NearDuplicate("near_a", "near_b", 0.87, 120), NearDuplicate("near_a", "twin_a", 0.61, 40)]
    before = [g.as_dict() for _, g in rows]
    queue = review_queue(assignment, rows, identical_groups(rows), near)
    why = {entry.submission: entry.why for entry in queue}
    assert list(why) == ["forbidden", "hidden forbidden", "fast", "broken", "twin_a", "twin_b", "near_a", "near_b"]
    assert all("\n" not in line for line in why.values())
    assert why["forbidden"] == (
        "forbidden API: used torch.nn.functional.layer_norm in layers.py line 3 (`F.layer_norm(x, s)`) "
        "(checks layer_norm, block)"
    )
    assert why["hidden forbidden"] == "forbidden API: used an API this assignment forbids (checks model)"
    assert why["fast"].startswith("attention_speed much faster than the reference (0.5 ms per call against")
    assert "0.05x" in why["fast"] and why["fast"].endswith("not paid until reviewed")
    assert why["broken"] == "not graded: the harness failed (HarnessFault: the sandbox broke)"
    assert (
        why["twin_a"]
        == "identical to twin_b (the same graded files); near-duplicate of near_a (61% of fingerprints shared)"
    )
    assert why["near_b"] == "near-duplicate of near_a (87% of fingerprints shared)"
    assert why["near_a"] == "near-duplicate of near_b (87% of fingerprints shared), twin_a (61% of fingerprints shared)"
    entries = {entry.submission: entry for entry in queue}
    assert entries["forbidden"].students == ("Ada",)
    assert entries["hidden forbidden"].link == "results/hidden%20forbidden/results.json"
    # Only read: every grade is as it was.
    assert [g.as_dict() for _, g in rows] == before


def test_the_report_renders_the_queue_and_the_near_duplicates_with_links(ngram, tmp_path):
    assignment, variant = ngram
    stub = templates.render(assignment, variant)["ngram.py"]
    reference = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    sources = {
        "original": reference,
        "copy": reformatted(renamed(reference, stub)),
        "independent": (SUBMISSIONS / "ngram" / "trie" / "ngram.py").read_text(),
    }
    rows = []
    for key, text in sources.items():
        (tmp_path / key).mkdir()
        (tmp_path / key / "ngram.py").write_text(text)
        checks = tuple(CheckScore(c.name, c.points, c.points, "") for c in assignment.checks)
        rows.append((SubmissionFolder(key, tmp_path / key, (Student(key.title()),)), Graded(checks, files_hash=key)))
    rows.append((SubmissionFolder("broken", tmp_path / "broken"), Graded(error="HarnessFault: it broke")))
    html = render_report(assignment, variant, rows)
    queue = html[html.index('<table id="review">') : html.index("</table>", html.index('<table id="review">'))]
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', queue) == [
        ("results/original/results.json", "original"),
        ("results/copy/results.json", "copy"),
        ("results/broken/results.json", "broken"),
    ]
    assert "<td>Original</td><td>near-duplicate of copy (" in queue and "independent" not in queue
    assert 'id="to-review">3<' in html
    near = html[html.index('<table id="near-duplicates">') :]
    near = near[: near.index("</table>")]
    assert near.count("<tr>") == 2 and "<td>original, copy</td>" in near and "<td>Original / Copy</td>" in near
    # Nothing to review: said so.
    clean = render_report(assignment, variant, rows[2:3])
    assert '<p id="review">No submission needs a person.</p>' in clean and 'id="to-review">0<' in clean
    assert '<p id="near-duplicates">No two submissions are near-duplicates.</p>' in clean
