"""The documentation site's build hooks (mkdocs.yml `hooks`): the API reference's sources, and a nav with
every page of docs/."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
API_SOURCES = ROOT / "build" / "docs-api"  # mkdocs.yml: mkdocstrings' `paths`
MORE = "More"  # the nav section of the pages mkdocs.yml's nav does not place


def link_api_sources(root: Path = ROOT) -> Path:
    """`build/docs-api/lmgrade`, the folder autograder/ under the name it is installed as.

    The API reference reads lmgrade's sources by package name (griffe, never an import), and the
    package `lmgrade` is the folder autograder/ (pyproject.toml's package-dir): a link gives it its
    name. Where links cannot be made, a copy of the sources does."""
    target, link = root / "autograder", root / "build" / "docs-api" / "lmgrade"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() and link.resolve() == target.resolve():
        return link
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    try:
        link.symlink_to(target, target_is_directory=True)
    except OSError:
        shutil.copytree(target, link, ignore=shutil.ignore_patterns("__pycache__"))
    return link


def listed(nav: list[Any]) -> set[str]:
    """The pages a nav names (its files, at any depth)."""
    found: set[str] = set()
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            found |= listed(value)
        elif isinstance(value, str) and not value.startswith(("http://", "https://")):
            found.add(value)
    return found


def pages(docs_dir: Path) -> list[str]:
    """Every Markdown page of the site, relative to docs/."""
    return sorted(path.relative_to(docs_dir).as_posix() for path in docs_dir.rglob("*.md"))


def completed_nav(nav: list[Any] | None, docs_dir: Path) -> list[Any] | None:
    """`nav` with every page it leaves out added under MORE; None (mkdocs lists every page) stays None."""
    if nav is None:
        return None
    missing = [page for page in pages(docs_dir) if page not in listed(nav)]
    return [*nav, {MORE: missing}] if missing else nav


# Made when mkdocs loads this module, while it reads mkdocs.yml: mkdocstrings takes its `paths` as they are
# when its own on_config runs, before this module's, and a path not there yet is one it never searches.
link_api_sources()


def on_config(config: Any) -> Any:
    config["nav"] = completed_nav(config["nav"], Path(config["docs_dir"]))
    return config
