"""The feedback page: one self-contained HTML file per grading (`lmgrade check --html`, `grade --html`).

For each check, its verdict, the known mistake it names, the text the terminal shows and, for a visible
check that failed, pictures of one of its failed cases (`pictured_case`; `lmgrade.reports.pictures`: a plugin's,
through the `lmgrade_pictures` hook, or the defaults). A hidden check shows its text alone: no case, expected value,
answer or picture of it reaches the page.

Everything on the page a submission can influence (its printed output, exception messages, answers drawn
into pictures, a check's text) is escaped by Jinja2's autoescaping; pictures are SVG documents inside
`data:` image URIs, which a browser never runs and which can hold no markup of the page; and the page's
Content-Security-Policy lets nothing run or load.
"""

from __future__ import annotations

import base64
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from .pictures import MAX_PICTURES, Picture, across_cases, default_pictures, draw_svgs, numbers_in, pictures_available
from .results import GradingRun, Verdict

TEMPLATES = Path(__file__).with_name("templates")
NO_MATPLOTLIB = (
    "No pictures: matplotlib, which draws them, is not installed here. Install it "
    "(python -m pip install matplotlib; lmgrade's own html extra has it) and write the page again."
)
PT_TO_PX = 4 / 3
# Drawing is most of what a page costs (a picture takes 50 to 120 ms of CPU): a page draws at most these
# many, and a check left without says how to see its case in full (`lmgrade check --case`).
MAX_PAGE_PICTURES = 8


@dataclass
class ShownPicture:
    title: str
    note: str
    data: str  # the SVG, base64
    width: int
    height: int


@dataclass
class ShownCheck:
    number: int
    name: str
    title: str
    score: str
    max_score: str
    state: str  # passed, partly, failed
    verdict: str
    visibility: str
    hidden: bool
    mistake: str
    output: str
    case: str = ""
    case_number: int = 0
    pictures: list[ShownPicture] = field(default_factory=list)
    not_drawn: list[str] = field(default_factory=list)


def _hidden(verdict: Verdict) -> bool:
    return verdict.check.visibility != "visible"


def _state(verdict: Verdict) -> tuple[str, str]:
    if verdict.passed:
        return "passed", "passed"
    return ("partly", "partly passed") if verdict.score > 0 else ("failed", "failed")


def pictured_case(verdict: Verdict) -> int | None:
    """The index of the case a failed visible check's pictures show: of its failed cases with an answer, the
    one whose expected value holds the most numbers (the most to see), the first of those."""
    if verdict.passed or _hidden(verdict):
        return None
    failed = [
        i
        for i, (_, case_verdict) in enumerate(verdict.cases)
        if not case_verdict.passed
        and i < len(verdict.answers)
        and i < len(verdict.expected)
        and verdict.answers[i] is not None
    ]
    if not failed:
        return None
    return max(failed, key=lambda i: (numbers_in(verdict.expected[i]), -i))


def pictures_of(assignment: str, verdict: Verdict, index: int, hook: Any = None) -> list[Picture]:
    """The pictures of case `index` of a visible check: the plugins' (`lmgrade_pictures`), else the defaults."""
    case = verdict.cases[index][0]
    expected, answer = verdict.expected[index], verdict.answers[index]
    if hook is not None:
        declared = hook.lmgrade_pictures(
            assignment=assignment, check=verdict.check, case=case, expected=expected, answer=answer
        )
        if declared:  # the results of every plugin that answered (None: no say)
            return [p for result in declared for p in result][:MAX_PICTURES]
    chosen = default_pictures(expected, answer, verdict.check.tolerance_of(case))
    if not chosen:  # one number per case: every case on one picture
        whole = across_cases(verdict.expected, verdict.answers)
        chosen = [whole] if whole is not None else []
    return chosen


def _size(svg: str) -> tuple[int, int]:
    found = re.search(r'<svg[^>]*?width="([\d.]+)pt"[^>]*?height="([\d.]+)pt"', svg[:2000])
    if not found:
        return 640, 300
    return round(float(found[1]) * PT_TO_PX), round(float(found[2]) * PT_TO_PX)


def _shown_picture(picture: Picture, svg: str) -> ShownPicture:
    width, height = _size(svg)
    return ShownPicture(picture.title, picture.note, base64.b64encode(svg.encode()).decode("ascii"), width, height)


def _shown_check(assignment: str, verdict: Verdict, draw: bool, hook: Any) -> tuple[ShownCheck, list, int | None]:
    """The check as the page shows it, the pictures chosen for it, and the case they show."""
    check = verdict.check
    state, words = _state(verdict)
    shown = ShownCheck(
        number=verdict.number,
        name=check.name,
        title=check.title,
        score=f"{verdict.score:.4g}",
        max_score=f"{verdict.max_score:g}",
        state=state,
        verdict=words,
        visibility=check.visibility,
        hidden=_hidden(verdict),
        mistake=verdict.mistake.explanation if verdict.mistake else "",
        output=verdict.output,
    )
    index = pictured_case(verdict) if draw else None
    if index is None:
        return shown, [], None
    try:
        chosen = pictures_of(assignment, verdict, index, hook)
    except Exception as exc:  # a plugin's pictures, or answers no picture fits: the text stands alone
        shown.not_drawn.append(f"No picture of this case ({type(exc).__name__} while choosing them).")
        return shown, [], None
    if not all(p.every_case for p in chosen):
        shown.case, shown.case_number = verdict.cases[index][0].label, index + 1
    return shown, chosen, index


def _within_room(chosen: list[tuple[ShownCheck, list[Picture]]]) -> list[tuple[ShownCheck, Picture]]:
    """At most MAX_PAGE_PICTURES, each check's first before any check's second: every failed check gets a
    picture before one gets two."""
    kept: list[tuple[int, int, ShownCheck, Picture]] = []
    for rank in range(MAX_PICTURES):
        for order, (shown, pictures) in enumerate(chosen):
            if rank < len(pictures) and len(kept) < MAX_PAGE_PICTURES:
                kept.append((order, rank, shown, pictures[rank]))
    return [(shown, picture) for _, _, shown, picture in sorted(kept, key=lambda k: k[:2])]


def render_page(assignment: str, run: GradingRun, title: str, *, hook: Any = None) -> str:
    """The page of one grading, as HTML text. `hook`: the plugin manager's hooks (`lmgrade_pictures`)."""
    draw = pictures_available()
    checks: list[ShownCheck] = []
    chosen: list[tuple[ShownCheck, list[Picture]]] = []
    cases: dict[int, int] = {}
    for verdict in run.verdicts:
        shown, pictures, index = _shown_check(assignment, verdict, draw, hook)
        checks.append(shown)
        if pictures:
            chosen.append((shown, pictures[:MAX_PICTURES]))
            cases[id(shown)] = index
    wanted = _within_room(chosen)
    for shown, _ in chosen:
        if not any(s is shown for s, _ in wanted):
            number = cases[id(shown)] + 1
            shown.case, shown.case_number = "", 0
            shown.not_drawn.append(
                f"No pictures: a page draws at most {MAX_PAGE_PICTURES}. This check's failed case {number} in "
                f"full: lmgrade check {assignment} --case {shown.name}:{number}"
            )
    for (shown, picture), svg in zip(wanted, draw_svgs([p for _, p in wanted]) if wanted else []):
        if isinstance(svg, Exception):
            shown.not_drawn.append(f"The picture {picture.title!r} could not be drawn ({type(svg).__name__}).")
        else:
            shown.pictures.append(_shown_picture(picture, svg))
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every text, whoever wrote it, is text: never markup
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    missing = not draw and any(pictured_case(v) is not None for v in run.verdicts)
    return environment.get_template("page.html.j2").render(
        title=title,
        score=f"{run.score:.4g}",
        max_score=f"{run.max_score:g}",
        note=run.note,
        pictures_note=NO_MATPLOTLIB if missing else "",
        checks=checks,
    )


def write_page(path: Path, assignment: str, run: GradingRun, title: str, *, hook: Any = None) -> int:
    """Write the page of one grading to `path` (atomically); its size in bytes."""
    text = render_page(assignment, run, title, hook=hook)
    data = text.encode("utf-8")
    path = Path(path)
    # Replaced whole: a browser reloading it sees the old page or the new one.
    fd, tmp = tempfile.mkstemp(prefix=".page-", suffix=".html", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)
