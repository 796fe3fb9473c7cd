"""The feedback page (`lmgrade check --html`): its pictures, chosen from the answers' shapes or declared by a
plugin; hidden checks shown as text alone; and whatever a submission controls kept text, never markup."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from lmgrade.declare.checks import Case, CaseVerdict, Check, Mistake
from lmgrade.declare.hookspecs import hookimpl
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.reports import pictures
from lmgrade.reports.gradescope import page_pointer, results_json
from lmgrade.reports.page import render_page, write_page
from lmgrade.reports.results import CheckScore, GradingRun, Verdict

pytest.importorskip("matplotlib", reason="the pictures need matplotlib (the html extra)")

HIDDEN_VALUE = 987.6543210123  # an expected value of a hidden check: never on the page, in any form


def _check(name: str, visibility: str = "visible") -> Check:
    return Check(name, f"the {name} check", lambda modules: None, lambda ctx: [], points=10, visibility=visibility)


def _verdict(check: Check, number: int, expected: list, answers: list, *, output="", passed=False, label="a case"):
    cases = [
        (Case(f"{label} {i + 1}", {}), CaseVerdict(passed, "" if passed else "wrong")) for i in range(len(answers))
    ]
    return Verdict(check, number, 10.0 if passed else 0.0, output, cases, expected=expected, answers=answers)


def _images(page: str) -> list[str]:
    """Every picture of the page, as its SVG text."""
    return [
        base64.b64decode(data).decode("utf-8") for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    ]


def _hidden_forms(value: float) -> list[str]:
    return [repr(value), f"{value:.6g}", f"{value:.10g}", f"{value:.4f}"]


def test_a_matrix_is_shown_beside_the_expected_with_a_map_of_where_they_differ():
    expected = np.tril(np.full((5, 5), 0.2))
    leaked = np.full((5, 5), 0.2)  # attention that sees the future: a bright upper triangle
    (picture,) = pictures.default_pictures({"weights": expected}, {"weights": leaked})
    assert picture.kind == pictures.MATRIX and picture.title == "weights"
    svg = pictures.draw_svg(picture)
    assert "where they differ" in svg and ElementTree.fromstring(svg.encode()).tag.endswith("svg")


def test_a_sequence_is_two_curves_and_several_parts_their_relative_errors():
    losses = [2.0, 1.5, 1.2, 1.0]
    (curve,) = pictures.default_pictures({"losses": losses}, {"losses": [2.0, 1.9, 1.9, 1.8]})
    assert curve.kind == pictures.CURVES and curve.axis == "step" and len(curve.series) == 2
    grads = {f"gradient w.r.t. w{i}": np.arange(6.0).reshape(2, 3) + i for i in range(3)}
    wrong = {**grads, "gradient w.r.t. w1": grads["gradient w.r.t. w1"] * 2}
    worst, errors = pictures.default_pictures(grads, wrong)
    assert errors.kind == pictures.BARS and errors.categories == tuple(grads)
    assert worst.kind == pictures.MATRIX and worst.title == "gradient w.r.t. w1"


def test_a_training_runs_losses_come_first_as_the_loss_curve_against_the_references():
    expected = {"losses": [2.0, 1.6, 1.3, 1.1], "weights after training": np.ones((4, 4))}
    answer = {"losses": [2.0, 1.9, 1.85, 1.8], "weights after training": np.full((4, 4), 9.0)}
    first, second = pictures.default_pictures(expected, answer)
    assert (first.kind, first.title, first.axis) == (pictures.CURVES, "losses", "step")
    assert second.kind == pictures.MATRIX


def test_draws_are_frequencies_against_the_models_and_right_answers_no_picture():
    table = {("a",): 0.7, ("b",): 0.3}
    (sampled,) = pictures.default_pictures(
        {"draws": [["a"]] * 7 + [["b"]] * 3, "table": table}, {"draws": [["a"]] * 10}
    )
    assert sampled.kind == pictures.BARS and sampled.categories[:2] == ("a", "b")
    observed = dict(sampled.series)["your draws"]
    assert observed.tolist() == [1.0, 0.0]
    right = {"output": np.eye(3), "loss": 1.5}
    assert pictures.default_pictures(right, {"output": np.eye(3), "loss": 1.5}) == []
    assert pictures.default_pictures({"x": "text"}, {"x": "other"}) == []


def test_a_large_matrix_is_shown_around_its_worst_entry():
    expected = np.zeros((3, 200, 300))
    got = expected.copy()
    got[2, 150, 250] = 1.0
    (picture,) = pictures.default_pictures(expected, got)
    shown = dict(picture.series)[pictures.YOURS]
    assert shown.shape == (pictures.MAX_SIDE, pictures.MAX_SIDE) and shown.max() == 1.0
    assert picture.title == "answer[2]"


def test_hidden_checks_show_their_text_and_nothing_of_their_values():
    visible = _check("visible_one")
    hidden = _check("hidden_one", "after_due_date")
    secret = np.full((4, 4), HIDDEN_VALUE)
    run = GradingRun(
        Path("."),
        "",
        [
            _verdict(visible, 1, [np.eye(4)], [np.zeros((4, 4))], output="3 of 16 values wrong"),
            _verdict(hidden, 2, [{"out": secret, "loss": HIDDEN_VALUE}], [{"out": secret * 2, "loss": 1.0}]),
        ],
    )
    page = render_page("demo", run, "demo: a submission")
    sources = [page, *_images(page)]
    assert len(_images(page)) == 1  # the visible check's matrix
    for form in _hidden_forms(HIDDEN_VALUE) + _hidden_forms(2 * HIDDEN_VALUE):
        assert not any(form in source for source in sources), form
    hidden_section = page.split('id="check-2"')[1]
    assert "<img" not in hidden_section and "after due date check: its text only" in hidden_section


class _Pictures:
    """A plugin that declares its own picture for one check, as an installed package would."""

    @hookimpl
    def lmgrade_pictures(self, assignment, check, case, expected, answer):
        if check.name != "declared":
            return None
        return [pictures.curves("the plugin's own picture", answer["x"], expected["x"], axis="token")]


def test_a_plugin_declares_pictures_through_the_hook_and_the_others_keep_the_defaults():
    manager = make_manager(load_entry_points=False)
    manager.register(_Pictures())
    run = GradingRun(
        Path("."),
        "",
        [
            _verdict(_check("declared"), 1, [{"x": [1.0, 2.0, 3.0]}], [{"x": [1.0, 2.0, 4.0]}]),
            _verdict(_check("default"), 2, [np.eye(3)], [np.ones((3, 3))]),
        ],
    )
    page = render_page("demo", run, "demo", hook=manager.hook)
    first, second = page.split('id="check-2"')
    assert "the plugin&#39;s own picture" in first and ">token<" in _images(first)[0]
    assert "where they differ" in _images(second)[0]


def test_the_page_is_written_and_results_json_points_to_it_only_where_a_visible_check_lost_points(tmp_path):
    run = GradingRun(Path("."), "", [_verdict(_check("one"), 1, [1.0], [2.0])])
    path = tmp_path / "feedback.html"
    size = write_page(path, "demo", run, "demo")
    assert path.stat().st_size == size and path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    check = _check("one")
    lost = results_json([(1, check)], {1: CheckScore("one", 5.0, 10, "half")}, pointer=page_pointer("demo"))
    full = results_json([(1, check)], {1: CheckScore("one", 10.0, 10, "")}, pointer=page_pointer("demo"))
    assert "lmgrade check demo . --html feedback.html" in lost["output"] and full["output"] == ""
    assert "http" not in lost["output"] and "<" not in lost["output"]


class _Tags(HTMLParser):
    """The elements of a page, in order: its structure, whatever text it holds."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def _tags(page: str) -> list[str]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


HOSTILE = st.one_of(
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            "</pre></section><script>fetch('x')</script>",
            "</svg><img src=x onerror=alert(1)>",
            '"><img src=x onerror="alert(1)',
            "' onmouseover='alert(1)",
            "{{ 7 * 7 }}{% raw %}",
            "]]><!--",
            "$\\frac{1}{0}$ \x00 \x1b[31m",
        ]
    ),
    st.text(min_size=1, max_size=200),
    st.text(alphabet="<>&\"'/=", min_size=1, max_size=50).map(lambda s: s * 2000),  # a huge one
)


def _hostile_run(text: str, draws: list) -> GradingRun:
    """Text a submission controls everywhere it reaches the page: its printed output and exception message
    (the check's text), its answers (drawn into a picture) and a case's label built from its data."""
    mistake = Mistake("made", text)
    sampled = _verdict(
        _check("sample"), 1, [{"draws": [["a"], ["b"]], "table": {("a",): 0.5, ("b",): 0.5}}], [{"draws": draws}]
    )
    sampled.output, sampled.mistake = text, mistake
    sampled.cases = [(Case(text, {}), CaseVerdict(False, text))]
    plain = _verdict(_check("plain"), 2, [1.0], [None], output=f"printed: {text}")
    return GradingRun(Path("."), text, [sampled, plain])


BENIGN = _tags(render_page("demo", _hostile_run("benign words", [["a"], ["c"]]), "demo"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=HOSTILE)
def test_hostile_text_never_becomes_markup(text):
    page = render_page("demo", _hostile_run(text, [["a"], [text[:300]]]), f"demo: {text}")
    assert _tags(page) == BENIGN  # the same elements as with benign text: nothing added, nothing closed early
    assert str(escape(text))[:500] in page  # shown, as text
    for svg in _images(page):
        root = ElementTree.fromstring(svg.encode("utf-8"))  # well-formed: the text stayed text in it too
        assert not any(element.tag.endswith(("script", "foreignObject")) for element in root.iter())


def test_a_page_draws_at_most_its_share_each_failed_check_first_and_the_rest_say_how_to_see_them():
    from lmgrade.reports.page import MAX_PAGE_PICTURES

    parts = {f"w{i}": np.arange(6.0).reshape(2, 3) + i for i in range(3)}
    wrong = {key: value * 2 for key, value in parts.items()}  # two pictures each: the errors and a matrix
    failed = [_verdict(_check(f"c{n}"), n, [parts], [wrong]) for n in range(1, MAX_PAGE_PICTURES + 3)]
    page = render_page("demo", GradingRun(Path("."), "", failed), "demo")
    sections = page.split('<section class="check"')[1:]
    drawn = [section.count("<img") for section in sections]
    assert sum(drawn) == MAX_PAGE_PICTURES and drawn[:MAX_PAGE_PICTURES] == [1] * MAX_PAGE_PICTURES
    assert all("lmgrade check demo --case c" in section for section in sections[MAX_PAGE_PICTURES:])


def test_a_preload_still_drawing_leaves_the_pages_pictures_whole():
    pictures.preload()  # matplotlib imported, and one picture drawn, in a thread of its own
    (svg,) = pictures.draw_svgs([pictures.matrix("m", np.eye(3), np.ones((3, 3)))])
    assert "<text" in svg and 'id="DejaVuSans-' not in svg  # text as text, not glyph paths: the settings held
    assert ElementTree.fromstring(svg.encode()).tag.endswith("svg")
