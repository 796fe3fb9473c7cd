"""The feedback page of a real grading, opened from disk in a headless Chromium, as a student opens it.

A catalogue bug of the rnn assignment (BPTT that drops the carried gradient) fails two visible checks with
gradient matrices and a hidden one (`bptt_hidden`, after the due date). The page must load with no console
error, show every check, draw its pictures at a size a reader can see, and hold none of the hidden check's
expected values anywhere in its source, its pictures included. The browser is the system's Chromium
(test_docs_site.chromium); where it or playwright is absent the test is skipped with the reason."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest
from test_docs_site import CHROMIUM_FLAGS, PAGE_TIMEOUT_MS, chromium

from lmgrade.declare.plugin_manager import get_manager
from lmgrade.reports.page import write_page
from lmgrade.reports.results import GradingRun

pytest.importorskip("matplotlib", reason="the pictures need matplotlib (the html extra)")

BUG = ("rnn", "bptt_no_carry")
MIN_WIDTH_PX, MIN_HEIGHT_PX = 300, 150  # a picture a reader can see without zooming


def _numbers(value) -> list[float]:
    """Every number of an expected value (arrays, dicts, lists)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return [float(x) for x in value.ravel()]
    if isinstance(value, float):
        return [value]
    return []


@pytest.fixture(scope="module")
def graded_page(bug_verdicts, tmp_path_factory):
    verdicts = bug_verdicts(*BUG)
    run = GradingRun(Path("submission"), "", verdicts)
    path = tmp_path_factory.mktemp("page") / "feedback.html"
    write_page(path, BUG[0], run, f"{BUG[0]}: {BUG[1]}", hook=get_manager().hook)
    return path, verdicts


def test_no_hidden_expected_value_is_anywhere_in_the_page(graded_page):
    path, verdicts = graded_page
    source = path.read_text(encoding="utf-8")
    pictures = [base64.b64decode(d).decode() for d in re.findall(r"base64,([^\"]+)\"", source)]
    hidden = [v for v in verdicts if v.check.visibility != "visible"]
    assert hidden and not all(v.passed for v in hidden), "the bug must fail a hidden check for this test to mean much"
    values = {x for v in hidden for expected in v.expected for x in _numbers(expected) if x not in (0.0, 1.0)}
    assert len(values) > 20
    for value in values:
        for form in (repr(value), f"{value:.6g}", f"{value:.8f}"):
            assert form not in source and not any(form in p for p in pictures), (value, form)


def test_the_page_loads_with_every_check_and_pictures_a_reader_can_see(graded_page, tmp_path):
    path, verdicts = graded_page
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the Python package playwright is not installed (the test extra has it)"
    )
    executable = chromium()
    if executable is None:
        pytest.skip("no system Chromium (Debian: apt-get install chromium; or set LMGRADE_CHROMIUM)")
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=executable, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            shown = page.eval_on_selector_all("section.check", "sections => sections.map(s => s.dataset.check)")
            sizes = page.eval_on_selector_all(
                "figure img",
                "images => images.map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().width,"
                " i.getBoundingClientRect().height])",
            )
            images_per_check = dict(
                page.eval_on_selector_all(
                    "section.check",
                    "sections => sections.map(s => [s.dataset.check, s.querySelectorAll('img').length])",
                )
            )
        finally:
            context.close()
    assert not errors, errors
    assert shown == [v.check.name for v in verdicts]
    assert [r for r in requested if not r.startswith(("file:", "data:"))] == []  # nothing fetched
    failed_visible = [v for v in verdicts if not v.passed and v.check.visibility == "visible"]
    assert failed_visible and len(sizes) >= len(failed_visible)
    for complete, natural, width, height in sizes:
        assert complete and natural > 0, "a picture that did not decode"
        assert width >= MIN_WIDTH_PX and height >= MIN_HEIGHT_PX, (width, height)
    assert all(images_per_check[v.check.name] == 0 for v in verdicts if v.check.visibility != "visible")
    assert all(images_per_check[v.check.name] > 0 for v in failed_visible[:2])
