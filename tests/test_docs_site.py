"""The built documentation site, read where it is read: opened from disk (file://) in a headless Chromium.

Every link of the nav, from index.html, must open a page with a title: never a missing file, a 404 page or a
folder's listing (what a link to `page/` shows from disk). The pages' own links are followed as well. The
browser is the system's Chromium (Debian's `chromium`; LMGRADE_CHROMIUM names another), driven by the Python
`playwright` package (the test extra); where either is absent the test is skipped with the reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from helpers import ROOT

DOCS = ROOT / "docs"
# Flags that keep Chromium from reaching out (updates, sync, QUIC probes) and from needing a GPU or a
# sandbox of its own (the suite may run as root, in a container).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_TIMEOUT_MS = 20_000


def chromium() -> str | None:
    """The system's Chromium: LMGRADE_CHROMIUM, else the first of Debian's and other distributions' names."""
    named = os.environ.get("LMGRADE_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def markdown_links(page: Path) -> set[Path]:
    """The pages of docs/ a Markdown page links to (relative links to .md files, anchors dropped)."""
    found = set()
    for target in re.findall(r"\]\(([^)\s#]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
        if "://" not in target:
            found.add((page.parent / target).resolve())
    return found


def test_every_page_is_reached_from_the_home_page_by_the_pages_own_links():
    """A reader who starts on the home page finds every page by reading, not only through the nav."""
    home = (DOCS / "index.md").resolve()
    reached, todo = {home}, [home]
    while todo:
        for target in markdown_links(todo.pop()):
            if target not in reached and target.is_file():
                reached.add(target)
                todo.append(target)
    unreached = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if p.resolve() not in reached)
    assert not unreached, f"pages no link leads to from index.md: {unreached}"


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed: pip install -e '.[docs]'")
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return site


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the Python package playwright is not installed (the test extra has it)"
    )
    executable = chromium()
    if executable is None:
        pytest.skip("no system Chromium (Debian: apt-get install chromium; or set LMGRADE_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh profile: --user-data-dir
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
        )
        try:
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            yield page
        finally:
            context.close()


def in_site(url: str, site: Path) -> Path | None:
    """The file of the site a file:// URL names, fragment dropped; None for a URL outside the site."""
    parsed = urlparse(urldefrag(url).url)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    return path if path.is_relative_to(site) else None


def what_is_wrong(page, path: Path, site: Path) -> str | None:
    """Why an opened page is not a page of the site, or None."""
    if path.is_dir() or page.url.endswith("/"):
        return "a folder's listing, not a page"
    title = page.title().strip()
    if not title or title.startswith("Index of"):
        return f"no title ({title!r})"
    if path.name == "404.html" or page.locator("h1").count() == 0:
        return "no page: the 404 page or no heading"
    if not path.is_file():
        return "no such file"
    return None


def test_the_site_opened_from_disk_leads_from_every_nav_link_to_a_titled_page(built_site, browser_page):
    page, index = browser_page, built_site / "index.html"
    page.goto(index.as_uri())
    nav = page.eval_on_selector_all("nav.md-nav--primary a.md-nav__link[href]", "links => links.map(a => a.href)")
    targets = {path for url in nav if (path := in_site(url, built_site)) is not None}
    assert len(targets) >= len(list(DOCS.rglob("*.md"))), f"the nav links to {len(targets)} pages only"
    opened: dict[Path, str | None] = {}
    todo = sorted(targets)
    while todo:
        path = todo.pop()
        if path in opened:
            continue
        try:
            page.goto(path.as_uri())
        except Exception as exc:  # playwright's Error: net::ERR_FILE_NOT_FOUND and the like
            opened[path] = f"does not open ({str(exc).splitlines()[0]})"
            continue
        opened[path] = what_is_wrong(page, path, built_site)
        links = page.eval_on_selector_all("article a[href]", "links => links.map(a => a.href)")
        todo.extend(p for url in links if (p := in_site(url, built_site)) is not None and p not in opened)
    wrong = {str(p.relative_to(built_site)): why for p, why in opened.items() if why}
    assert not wrong, wrong
    assert built_site / "class-report.html" in opened and built_site / "spec" / "cli.html" in opened
