"""Attacks on the surfaces added lately, written from their docs alone (tests/cheats/surfaces/README.md).

Each surface's attacks are built by tests/cheats/surfaces/<surface>/ and run through the command line, as a
course runs it: notebooks (`lmgrade grade` on a `.ipynb`), the class CSVs and gradebooks and the review
queue and report (`lmgrade regrade` on an export shaped like Gradescope's), near-duplicates (a disguised
copy regraded beside its origin) and the transformer's timing laps (study: a transformer grading each).
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cheats.surfaces.class_csv import export as class_csv
from cheats.surfaces.near_duplicates.disguise import DISGUISES
from cheats.surfaces.notebooks.build import ATTACKS as NOTEBOOK_ATTACKS
from cheats.surfaces.notebooks.build import MIB, _cell, _correct_cell, _notebook, _spliced
from cheats.surfaces.review_queue import export as review_queue
from cheats.surfaces.timing_laps import build as timing_laps

from helpers import SUBMISSIONS, study_unless
from lmgrade.course.regrade import near_duplicates as near
from lmgrade.declare import catalog, templates

CORRECT_NGRAM = SUBMISSIONS / "ngram" / "dict_of_dicts" / "ngram.py"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _run(*args, cwd: Path, home: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`lmgrade ARGS` in a process of its own (the timeout only stops a hang from stalling the suite)."""
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _peak_rss_kib(*args, cwd: Path) -> int:
    """The largest resident set, in KiB, of `lmgrade ARGS` and every process it waited for."""
    measure = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    run = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "lmgrade.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return int(run.stdout.split()[-1])


def _files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


# 1. Notebooks


@pytest.mark.parametrize("attack", NOTEBOOK_ATTACKS, ids=lambda a: a.name)
def test_a_hostile_notebook_is_refused_in_one_line_or_graded_as_its_correct_cell(attack, tmp_path):
    """Never a traceback or a hang; a bad notebook is 0 with one line naming it; a notebook holding a correct
    cell is full marks whatever else it holds; no cell writes anything outside the submission."""
    home, work, marker = tmp_path / "home", tmp_path / "work", tmp_path / "marker"
    home.mkdir()
    work.mkdir()
    notebook = work / f"{attack.name}.ipynb"
    notebook.write_bytes(attack.build(CORRECT_NGRAM.read_text(encoding="utf-8"), marker))
    before = _files_under(tmp_path)

    run = _run("grade", "ngram", notebook, "--results", work / "results.json", cwd=work, home=home)

    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    document = json.loads((work / "results.json").read_text(encoding="utf-8"))
    everything = said + json.dumps(document)
    assert "Traceback" not in everything and "CHEAT-FOUND" not in everything
    lines = [line for line in document["output"].splitlines() if line.strip() and not line.startswith("WARNING")]
    first = lines[0]
    refusals = (" is not ", " is larger than ", " writes none of ", " write more than ")
    named = notebook.name in first or "notebook" in first
    refused = document["score"] == 0 and named and any(words in first for words in refusals)
    graded = document["score"] == 100 and first.startswith(f"{notebook.name}: graded the files its cells write")
    assert refused or graded, (document["score"], first)
    if attack.refused is not None:
        assert refused == attack.refused, (document["score"], first)
    assert not marker.exists()
    assert _files_under(tmp_path) - before == {work / "results.json"}


def test_a_notebook_of_escaped_strings_is_read_within_four_times_its_size(tmp_path):
    """docs/notebooks.md: any notebook within the bounds "is read in at most about twice its size". One of
    8 MiB whose markdown cell is 4 million `\\n` escapes (two bytes each) against the same correct notebook
    without it: the difference in peak memory of the whole grading stays under four times the file."""
    ngram = CORRECT_NGRAM.read_text(encoding="utf-8")
    plain = tmp_path / "plain.ipynb"
    plain.write_bytes(_spliced(_notebook([_correct_cell(ngram), _cell("@@RAW@@", kind="markdown")]), b'""'))
    escaped = tmp_path / "escaped.ipynb"
    escapes = b'"' + b"\\n" * (4 * MIB) + b'"'
    escaped.write_bytes(_spliced(_notebook([_correct_cell(ngram), _cell("@@RAW@@", kind="markdown")]), escapes))

    baseline = _peak_rss_kib("grade", "ngram", plain, "--results", tmp_path / "plain.json", cwd=tmp_path)
    peak = _peak_rss_kib("grade", "ngram", escaped, "--results", tmp_path / "escaped.json", cwd=tmp_path)

    assert json.loads((tmp_path / "escaped.json").read_text())["score"] == 100
    assert (peak - baseline) * 1024 <= 4 * escaped.stat().st_size, f"{peak - baseline} KiB more than {baseline}"


# 2. Class CSVs and gradebooks

NUMERIC = {
    "scores.csv": None,  # every column from `score` to the last check's
    "gradebook_gradescope.csv": ("Total Score",),
    "gradebook_canvas.csv": ("ngram",),
}


@pytest.fixture(scope="module")
def formula_class(tmp_path_factory):
    """The export of tests/cheats/surfaces/class_csv regraded: (the run, the output folder)."""
    root = tmp_path_factory.mktemp("formula_class")
    export = class_csv.write(root, CORRECT_NGRAM.read_text(encoding="utf-8"))
    run = _run("regrade", "ngram", export, "-o", root / "grades" / "scores.csv", cwd=root)
    return run, root / "grades"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _numeric_columns(name: str, header: list[str]) -> list[str]:
    if NUMERIC[name] is not None:
        return list(NUMERIC[name])
    return header[header.index("score") : header.index("not graded")]


def _is_number(cell: str) -> bool:
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_no_cell_a_student_controls_is_a_formula_and_the_grader_s_numbers_stay_numbers(formula_class, name):
    run, grades = formula_class
    assert run.returncode == 0, run.stdout + run.stderr
    rows = _rows(grades / name)
    numeric = _numeric_columns(name, list(rows[0]))
    for row in rows:
        for column, cell in row.items():
            if column in numeric:
                optional = column in ("gradescope score", "change")
                assert _is_number(cell) or (optional and cell == ""), (column, cell)
            else:
                assert not cell.startswith(FORMULA_STARTS), (name, column, cell)


def test_every_student_is_in_the_gradebook_escaped_not_dropped(formula_class):
    """Each payload is in the Gradescope gradebook as it was given, or with the one leading apostrophe."""
    _, grades = formula_class
    cells = {cell for row in _rows(grades / "gradebook_gradescope.csv") for cell in row.values()}
    for payload in class_csv.FORMULAS:
        assert payload in cells or "'" + payload in cells, payload


def test_a_metadata_file_with_python_tags_runs_nothing(tmp_path):
    """Not a student's value but the export's own file: a YAML tag that an unsafe loader would run is never
    run; the regrade grades the folder or refuses the file, without a traceback."""
    export, marker = tmp_path / "export", tmp_path / "ran"
    (export / "submission_1").mkdir(parents=True)
    (export / "submission_1" / "ngram.py").write_text(CORRECT_NGRAM.read_text(encoding="utf-8"), encoding="utf-8")
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n"
        f'  - :name: !!python/object/apply:os.system ["touch {marker}"]\n'
        "    :email: a@example.edu\n    :sid: '1'\n",
        encoding="utf-8",
    )
    run = _run("regrade", "ngram", export, "-o", tmp_path / "grades" / "scores.csv", cwd=tmp_path)
    assert not marker.exists()
    assert "Traceback" not in run.stdout + run.stderr
    assert run.returncode in (0, 2), run.stdout + run.stderr


# 3. The review queue and the report


class _Markup(HTMLParser):
    """Every start tag with its attributes, and the text inside script and style elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.code: list[str] = []
        self._inside: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._inside = tag if tag in ("script", "style") else None

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._inside = None

    def handle_data(self, data):
        if self._inside:
            self.code.append(data)


def _assert_no_markup_from(page: str, marker: str) -> None:
    markup = _Markup()
    markup.feed(page)
    for tag, attrs in markup.tags:
        assert tag not in ("script", "iframe", "object", "embed") and marker not in tag, tag
        for name, value in attrs:
            assert marker not in name and not name.startswith("on"), (tag, name, value)
            if value and marker in value:
                assert name == "href" and value.startswith("results/"), (tag, name, value)
                assert not set(value) & set("<>\"' "), value
    assert not any(marker in text for text in markup.code)


class _ReviewQueue(HTMLParser):
    """The entries of report.html's review queue: (the submissions named, their reasons)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.entries: list[tuple[list[str], list[str]]] = []
        self._in_queue = self._in_link = self._in_reason = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._in_queue = attrs.get("id") == "review"
        elif self._in_queue and tag == "tr" and attrs.get("class") == "review-entry":
            self.entries.append(([], []))
        elif self._in_queue and self.entries and tag == "a":
            self._in_link = True
            self.entries[-1][0].append("")
        elif self._in_queue and self.entries and tag == "div" and attrs.get("class") == "reason":
            self._in_reason = True
            self.entries[-1][1].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_queue = False
        elif tag == "a":
            self._in_link = False
        elif tag == "div":
            self._in_reason = False

    def handle_data(self, data):
        if self._in_link:
            self.entries[-1][0][-1] += data
        elif self._in_reason:
            self.entries[-1][1][-1] += data


@pytest.fixture(scope="module")
def spoofing_class(tmp_path_factory):
    """The export of tests/cheats/surfaces/review_queue regraded: (the run, the output folder)."""
    root = tmp_path_factory.mktemp("spoofing_class")
    export = review_queue.write(root, SUBMISSIONS / "ngram")
    run = _run("regrade", "ngram", export, "-o", root / "grades" / "scores.csv", cwd=root)
    return run, root / "grades"


def test_the_queue_holds_only_what_the_grading_observed(spoofing_class):
    """The only thing to review is the identical pair; nothing printed, raised or named is a reason."""
    run, grades = spoofing_class
    assert run.returncode == 0, run.stdout + run.stderr
    queue = _ReviewQueue()
    queue.feed((grades / "report.html").read_text(encoding="utf-8"))
    assert [sorted(names) for names, _ in queue.entries] == [sorted([review_queue.HTML_FOLDER, "control_copy"])]
    reasons = queue.entries[0][1]
    assert reasons and all(r.startswith("identical graded files") or " share most of their code" in r for r in reasons)
    for spoofed in review_queue.SPOOFED_REASONS:
        assert all(spoofed not in reason for reason in reasons)


def test_nothing_a_submission_wrote_becomes_markup_in_the_report(spoofing_class):
    _, grades = spoofing_class
    _assert_no_markup_from((grades / "report.html").read_text(encoding="utf-8"), review_queue.MARKER)


def test_the_feedback_of_the_spoofing_submissions_is_plain_text(spoofing_class):
    """Gradescope renders results.json's text as markup only where output_format asks for it."""
    _, grades = spoofing_class
    for folder in ("printer", "raiser"):
        document = json.loads((grades / "results" / folder / "results.json").read_text(encoding="utf-8"))
        assert document.get("output_format", "text") == "text", folder
        assert all(test.get("output_format", "text") == "text" for test in document["tests"])


def test_nothing_a_submission_raised_becomes_markup_in_its_feedback_page(tmp_path):
    """`lmgrade grade --html`: the raising submission's page, whose every check shows its exception."""
    export = review_queue.write(tmp_path, SUBMISSIONS / "ngram")
    page = tmp_path / "feedback.html"
    run = _run("grade", "ngram", export / "raiser", "--results", tmp_path / "r.json", "--html", page, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    text = page.read_text(encoding="utf-8")
    assert review_queue.MARKER in text  # the exception is shown, as text
    _assert_no_markup_from(text, review_queue.MARKER)


# 4. Near-duplicates


class _NearDuplicates(HTMLParser):
    """The groups of report.html's table of submissions that share their code: (names, similarity)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.groups: list[tuple[list[str], str]] = []
        self._in_table = False
        self._cells: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._in_table = dict(attrs).get("id") == "near-duplicates"
        elif self._in_table and tag == "tr":
            self._cells = []
        elif self._in_table and tag == "td" and self._cells is not None:
            self._cells.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_table = False
        elif self._in_table and tag == "tr" and self._cells:
            self.groups.append(([name.strip() for name in self._cells[1].split(",")], self._cells[3].strip()))
            self._cells = None

    def handle_data(self, data):
        if self._in_table and self._cells:
            self._cells[-1] += data


INDEPENDENT = "independent"  # the control: a solution written on its own, in the copy's place


# Regraded in the suite beside the original and the control: all disguises at once, and two alone (each of
# them graded costs a grading); the study regrades every one. Every copy is compared with the original alone.
REGRADED_IN_THE_SUITE = {"everything", "rename", "reorder"}


@pytest.fixture(scope="module")
def disguised_pairs(tmp_path_factory, study):
    """disguise -> (the copy's score, the original's, whether the report groups the copy with the original,
    whether the copy and the original alone make a near-duplicate pair), from one regrade of the original
    beside the disguised copies and the independent control (scores and groups None for a copy the suite
    does not regrade)."""
    root = tmp_path_factory.mktemp("disguised")
    export, grades = root / "export", root / "grades"
    source = CORRECT_NGRAM.read_text(encoding="utf-8")
    copies = {name: disguise(source) for name, (disguise, _) in DISGUISES.items()}
    copies[INDEPENDENT] = (SUBMISSIONS / "ngram" / "numpy_table" / "ngram.py").read_text(encoding="utf-8")
    regraded = {name for name in copies if study or name in REGRADED_IN_THE_SUITE | {INDEPENDENT}}
    for folder, text in {"original": source, **{f"copy_{name}": copies[name] for name in regraded}}.items():
        (export / folder).mkdir(parents=True)
        (export / folder / "ngram.py").write_text(text, encoding="utf-8")
    run = _run("regrade", "ngram", export, "-o", grades / "scores.csv", cwd=root)
    assert run.returncode == 0, run.stdout + run.stderr
    scores = {row["submission"]: float(row["score"]) for row in _rows(grades / "scores.csv")}
    table = _NearDuplicates()
    table.feed((grades / "report.html").read_text(encoding="utf-8"))
    # The report's groups join pairs that share a member: a copy could sit in the original's group through
    # another copy only, so each copy is also compared with the original alone, as the report compares two.
    assignment, variant = catalog.load("ngram")
    discounted = near.stub_runs(templates.render(assignment, variant).values())
    original = near.fingerprints([source], discounted)
    found = {}
    for name, copy in copies.items():
        alone = bool(near.near_duplicates({"original": original, "copy": near.fingerprints([copy], discounted)}))
        if name not in regraded:
            found[name] = (None, None, None, alone)
            continue
        grouped = any({f"copy_{name}", "original"} <= set(names) for names, _ in table.groups)
        found[name] = (scores[f"copy_{name}"], scores["original"], grouped, alone)
    return found


# Disguises the near-duplicate pass does not see through (none now: `if True:` blocks and `_ = 0` lines are
# undone as no-ops since these attacks found them).
MISSED: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.xfail(strict=True, reason=MISSED[name])] if name in MISSED else [])
        for name in sorted(DISGUISES)
    ],
)
def test_a_disguised_copy_is_still_a_near_duplicate_of_its_origin(disguised_pairs, name):
    copy_score, original_score, grouped, paired_alone = disguised_pairs[name]
    assert paired_alone
    if copy_score is not None:  # regraded beside the original
        assert copy_score == original_score == 100  # the disguise changed nothing the grader sees
        assert grouped


def test_an_independent_solution_beside_the_original_is_not_a_near_duplicate(disguised_pairs):
    """The control of the measurement above: the report's table is read, and it does not pair everything."""
    copy_score, original_score, grouped, paired_alone = disguised_pairs[INDEPENDENT]
    assert copy_score == original_score == 100
    assert not grouped and not paired_alone


# 5. Timing laps (a transformer grading each: study)


@pytest.mark.parametrize("attack", [pytest.param(a, marks=study_unless(False)) for a in timing_laps.ATTACKS])
def test_a_submission_not_right_on_every_lap_earns_no_timing_points(attack, tmp_path):
    folder = timing_laps.write(attack, tmp_path / attack)
    results = tmp_path / "results.json"
    run = _run("grade", "transformer", folder, "--device", "cpu", "--results", results, cwd=tmp_path, timeout=1800)
    assert run.returncode == 0, run.stdout + run.stderr
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    timed = {t["name"].split(":")[0]: t for t in tests if t["name"].startswith(("attention_speed", "train_step_speed"))}
    assert set(timed) == {"attention_speed", "train_step_speed"}
    for check, test in timed.items():
        assert test["score"] == 0, f"{check}: {test['score']} points\n{test['output']}"
