"""What the feedback page (`lmgrade check --html`) costs: time and size per page, for each assignment.

    python benchmarks/feedback_page.py [--assignment NAME ...] [--pages DIR] [--screenshots DIR]

Grades each assignment's flawed submission of `lmgrade demo` (the reference with its demo bugs made),
then makes its page: the wall and CPU time of `render_page` (choosing and drawing the pictures, filling
the template), its size and its pictures. Importing matplotlib is paid once per process, by the first
page: it is timed on its own, in a fresh interpreter. --pages keeps the pages; --screenshots also takes
a PNG of one failed check's section (SHOWN) in the system's Chromium (the docs' screenshots).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmgrade.core.seeds import course_secret
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog, torch_requirement
from lmgrade.declare.flawed import write_flawed
from lmgrade.declare.plugin_manager import get_manager
from lmgrade.grading.expected_store import default_store
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.grading.submission_grading import grade_submission
from lmgrade.reports.page import render_page
from lmgrade.sandbox.limits import default_jobs

# The check whose section each screenshot shows: one demo bug's, where it shows best.
SHOWN = {
    "ngram": "perplexity",
    "rnn": "elman_backward",
    "lstm": "lstm_backward",
    "embeddings": "ffnn_forward",
    "seq2seq": "attention",
    "transformer": "attention",
}
IMPORT = (
    "import time; t = time.perf_counter(); c = time.process_time(); "
    "import matplotlib.figure, matplotlib.backends.backend_svg; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)


def import_cost() -> tuple[float, float]:
    """Wall and CPU seconds of importing what draws the pictures, in a fresh interpreter (best of 3)."""
    command = [sys.executable, "-c", IMPORT]
    runs = [subprocess.run(command, capture_output=True, text=True, check=True) for _ in range(3)]
    walls, cpus = zip(*(map(float, r.stdout.split()) for r in runs))
    return min(walls), min(cpus)


def page_of(name: str, scratch: Path):
    bound, variant = catalog.load(Selection(name))
    bound = bound.on("cpu")
    spec = bound.spec
    bugs = [bug for bug in catalog.bugs(name).values() if bug.demo]
    flawed = write_flawed(spec.reference_folder(), spec.files, scratch / name, bugs)
    with Grader(
        bound, variant, LiveReference(spec), secret=course_secret(), jobs=default_jobs(), store=default_store()
    ) as grader:
        run = grade_submission(bound, variant, flawed, grader=grader)
    hook = get_manager().hook
    render_page(name, run, "warm-up")  # every page after the first: matplotlib and the fonts loaded
    wall, cpu = time.perf_counter(), time.process_time()
    page = render_page(name, run, f"{name}: the flawed submission of lmgrade demo", hook=hook)
    return page, time.perf_counter() - wall, time.process_time() - cpu, run


def small(png: Path, colours: int = 64, most_height: int = 1100) -> None:
    """A screenshot kept small for the docs: its top `most_height` pixels, in a palette of `colours`."""
    from PIL import Image

    with Image.open(png) as image:
        kept = image.crop((0, 0, image.width, min(image.height, most_height))).convert("RGB")
    kept.quantize(colors=colours).save(png, optimize=True)


def screenshots(pages: dict[str, Path], folder: Path) -> None:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_docs_site import CHROMIUM_FLAGS, chromium

    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=chromium(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1000, "height": 800},
        )
        page = context.new_page()
        for name, path in pages.items():
            page.goto(path.as_uri())
            pictured = page.locator(f'section.check[data-check="{SHOWN.get(name, "")}"]:has(img)')
            if not pictured.count():
                pictured = page.locator("section.check:has(img)").first
            if pictured.count():
                target = folder / f"{name}.png"
                pictured.screenshot(path=str(target), scale="css")
                small(target)
                print(f"screenshot: {target} ({target.stat().st_size // 1024} KiB)")
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", action="append", help="only these (default: every one this machine grades)")
    parser.add_argument("--pages", type=Path, help="keep the pages in this folder")
    parser.add_argument("--screenshots", type=Path, help="write a PNG of a pictured check of each page here")
    args = parser.parse_args()
    names = args.assignment or [n for n in catalog.assignment_folders() if n not in torch_requirement.missing_for([n])]
    wall, cpu = import_cost()
    print(f"importing matplotlib (the first page of a process pays it): {wall:.2f} s ({cpu:.2f} s CPU)")
    print(f"{'assignment':<12} {'page s':>7} {'CPU s':>6} {'KiB':>6} {'pictures':>8}  failed checks")
    kept: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            page, seconds, cpu_s, run = page_of(name, Path(scratch))
            failed = sum(not v.passed for v in run.verdicts)
            print(
                f"{name:<12} {seconds:>7.2f} {cpu_s:>6.2f} {len(page.encode()) / 1024:>6.0f} "
                f"{page.count('<figure>'):>8}  {failed} of {len(run.verdicts)}",
                flush=True,
            )
            if args.pages or args.screenshots:
                folder = args.pages or Path(scratch) / "pages"
                folder.mkdir(parents=True, exist_ok=True)
                kept[name] = folder / f"{name}.html"
                kept[name].write_text(page, encoding="utf-8")
        if args.screenshots:
            screenshots(kept, args.screenshots)


if __name__ == "__main__":
    main()
