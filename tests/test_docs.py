"""The documentation: the contract and the command-line spec in the repo, unchanged; the site's pages, each in
its nav and keeping up with the code (the API's docstrings, assignment.toml's keys, the templates' variables)."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from helpers import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SHARED = ROOT.parent / "shared" / "spec"


@pytest.mark.parametrize("name", ["student-api.md", "cli.md"])
def test_spec_copy_is_identical_to_the_course_spec(name):
    ours = ROOT / "docs" / "spec" / name
    assert ours.is_file(), f"docs/spec/{name} is missing"
    if not (SHARED / name).is_file():
        pytest.skip("the course's shared spec folder is not beside this checkout")
    assert ours.read_bytes() == (SHARED / name).read_bytes(), f"docs/spec/{name} differs from the course spec"


# The documentation site (mkdocs.yml, docs/): checked here without building it; `python3 dev.py docs`
# builds it strictly in CI (a broken link or anchor, or a docstring the reference cannot read, fails).

DOCS = ROOT / "docs"
API_PAGE = DOCS / "api.md"


def site_hooks():
    """mkdocs_hooks.py, the site's build hooks, imported from the repository's root."""
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def test_every_page_of_docs_is_in_the_sites_nav():
    hooks, config = site_hooks(), site_config()
    nav = hooks.completed_nav(config["nav"], DOCS)
    shown = hooks.listed(nav)
    assert {p.relative_to(DOCS).as_posix() for p in pages()} <= shown
    missing = sorted(page for page in hooks.listed(config["nav"]) if not (DOCS / page).is_file())
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"


def test_a_page_the_nav_leaves_out_is_added_under_more(tmp_path):
    hooks = site_hooks()
    for page in ("index.md", "guide.md", "new-topic.md", "spec/cli.md"):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text("# A page\n")
    nav = [{"Home": "index.md"}, {"Guides": [{"A guide": "guide.md"}]}]
    assert hooks.completed_nav(nav, tmp_path) == [*nav, {hooks.MORE: ["new-topic.md", "spec/cli.md"]}]
    assert hooks.completed_nav([{"Home": "index.md"}, "guide.md", "new-topic.md", "spec/cli.md"], tmp_path)[-1] == (
        "spec/cli.md"
    )


def test_the_api_sources_link_names_the_harness_lmgrade(tmp_path):
    (tmp_path / "autograder").mkdir()
    (tmp_path / "autograder" / "checks.py").write_text("X = 1\n")
    link = site_hooks().link_api_sources(tmp_path)
    assert link.name == "lmgrade" and (link / "checks.py").read_text() == "X = 1\n"
    assert site_hooks().link_api_sources(tmp_path) == link  # a second build finds it in place


def test_the_site_is_configured_strict_offline_and_out_of_git():
    config = site_config()
    assert config["strict"] is True and config["docs_dir"] == "docs"
    assert config["theme"].get("font") is False  # no web fonts fetched to read it
    assert all(config["validation"][key] == "warn" for key in ("omitted_files", "unrecognized_links", "anchors"))
    assert "site/" in (ROOT / ".gitignore").read_text().split()


def _markdown(page: Path):
    return MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_each_page_has_one_title(page):
    tokens = _markdown(page)
    titles = [i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h1"]
    assert len(titles) == 1 and titles[0] == 0, f"{page.name}: one # title, first"


def fence_problems(text: str) -> list[str]:
    """Code fences left open, or closed only for another to open at once (a stray ``` turning prose into
    code and code into prose)."""
    problems, fence, closed_at = [], None, None
    for number, line in enumerate(text.splitlines(), start=1):
        marker = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and marker:
            if closed_at is not None:
                problems.append(f"line {number}: a code block opens right after the one closed at {closed_at}")
            fence, opened_at, closed_at = marker.group(1), number, None
        elif fence is not None and marker and line.strip() == marker.group(1) and marker.group(1)[0] == fence[0]:
            fence, closed_at = None, number
        elif line.strip():
            closed_at = None
    if fence is not None:
        problems.append(f"line {opened_at}: a code block is never closed")
    return problems


@pytest.mark.parametrize("page", [ROOT / "README.md", *pages()], ids=lambda p: p.name)
def test_code_blocks_open_and_close_where_meant(page):
    assert not fence_problems(page.read_text(encoding="utf-8"))


def test_fence_problems_are_found():
    stray = "## Layout\n\n```\nThe folders are by role.\n\n```\n\n```\nreference/  the references\n```\n"
    assert fence_problems(stray) == ["line 8: a code block opens right after the one closed at 6"]
    assert fence_problems("text\n```python\nx = 1\n") == ["line 2: a code block is never closed"]
    assert not fence_problems("```\na\n```\n\nprose\n\n```toml\nb = 1\n```\n")


def test_the_readmes_links_lead_somewhere():
    """README.md is not a page of the site, so its links are not checked by the build: here they are."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local and all((ROOT / target).exists() for target in local), [t for t in local if not (ROOT / t).exists()]


# The public plugin API: every name `lmgrade` exports is rendered by the API reference, with a docstring.


def _lazy_exports() -> dict[str, str]:
    """{name: the module of lmgrade that defines it}, from autograder/__init__.py's `_LAZY` table."""
    tree = ast.parse((ROOT / "autograder" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_LAZY":
            return {k.value: v.value.partition(":")[0] for k, v in zip(node.value.keys, node.value.values)}
    raise AssertionError("autograder/__init__.py has no _LAZY table")


def rendered_names(text: str) -> set[str]:
    """The objects a page's `::: identifier` directives render, with the members a module's lists."""
    names: set[str] = set()
    current, in_members = None, False
    for line in text.splitlines():
        if m := re.match(r"^::: ([\w.]+)\s*$", line):
            current, in_members = m.group(1), False
            names.add(current)
        elif current and line.strip() == "members:":
            in_members = True
        elif current and in_members and (m := re.match(r"^\s+- (\w+)\s*$", line)):
            names.add(f"{current}.{m.group(1)}")
        elif line.strip() and not line.startswith(" "):
            current, in_members = None, False
    return names


def test_the_api_reference_renders_every_public_name():
    rendered = rendered_names(API_PAGE.read_text(encoding="utf-8"))
    wanted = {f"lmgrade.{module}.{name}" for name, module in _lazy_exports().items()}
    wanted |= {
        "lmgrade.core.selection.Selection",
        "lmgrade.declare.hookspecs.lmgrade_checks",
        "lmgrade.declare.hookspecs.lmgrade_bugs",
    }
    wanted |= {"lmgrade.declare.hookspecs.lmgrade_assignments", "lmgrade.declare.hookspecs.lmgrade_equivalent_mutants"}
    assert not wanted - rendered, f"docs/api.md renders none of {sorted(wanted - rendered)}"


def _module_source(module: str) -> ast.Module:
    return ast.parse((ROOT / "autograder" / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def undocumented(module: str, name: str) -> list[str]:
    """What of `name`, defined at the top of `module`, has no docstring the reference can render: the
    object itself, or, for a class, a field (an annotated attribute) without the string below it."""
    body = _module_source(module).body
    for i, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            missing = [] if ast.get_docstring(node) else [name]
            if isinstance(node, ast.ClassDef):
                for j, field in enumerate(node.body):
                    if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                        after = node.body[j + 1] if j + 1 < len(node.body) else None
                        missing += [] if _is_docstring(after) else [f"{name}.{field.target.id}"]
            return missing
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return [] if i + 1 < len(body) and _is_docstring(body[i + 1]) else [name]
    return [f"{name} (not defined at the top of {module})"]


def test_every_public_name_and_field_has_a_docstring():
    wanted = {**_lazy_exports(), "Selection": "core.selection"}
    missing = [f"lmgrade.{module}: {what}" for name, module in wanted.items() for what in undocumented(module, name)]
    assert not missing, "docstrings the API reference renders are missing: " + ", ".join(missing)


def test_an_undocumented_field_is_found(tmp_path, monkeypatch):
    module = ROOT / "autograder" / "declare" / "checks.py"
    tree = ast.parse(module.read_text(encoding="utf-8"))
    check = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Check")
    fields = [n.target.id for n in check.body if isinstance(n, ast.AnnAssign)]
    assert {"name", "scenario", "make_cases", "judge", "points", "visibility"} <= set(fields)
    source = "class Thing:\n    '''A thing.'''\n\n    size: int\n    '''How big.'''\n    colour: str\n"
    monkeypatch.setattr(sys.modules[__name__], "_module_source", lambda module: ast.parse(source))
    assert undocumented("thing", "Thing") == ["Thing.colour"]


# assignment.toml's keys and the templates' variables: the pages describe every one the code reads.


def _allowed_toml_keys() -> set[str]:
    """Every key autograder/declare/assignment.py accepts: the sets its readers' `only(...)` calls allow."""
    keys: set[str] = set()
    for node in ast.walk(_module_source("declare.assignment")):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "only" and node.args:
            if isinstance(node.args[0], ast.Set):
                keys |= {e.value for e in node.args[0].elts if isinstance(e, ast.Constant)}
    from lmgrade.sandbox.limits import Limits

    return keys | set(Limits.__dataclass_fields__)


def test_every_key_of_assignment_toml_is_described():
    page = (DOCS / "assignment-toml.md").read_text(encoding="utf-8")
    keys = _allowed_toml_keys()
    assert {"name", "files", "preload", "points_when", "wall_factor", "operators", "when_absent"} <= keys
    missing = sorted(k for k in keys if f"`{k}`" not in page and f"[{k}" not in page)
    assert not missing, f"docs/assignment-toml.md does not describe {missing}"


def test_the_assignment_toml_example_loads_and_uses_every_key(tmp_path):
    from lmgrade.declare.assignment import load_assignment

    page = (DOCS / "assignment-toml.md").read_text(encoding="utf-8")
    example = next(t.content for t in MarkdownIt("commonmark").parse(page) if t.type == "fence" and t.info == "toml")
    folder = tmp_path / "transformer"
    (folder / "templates").mkdir(parents=True)
    for template in re.findall(r'= "(templates/[\w.]+)"', example):
        (folder / template).write_text("{{ title }}\n")
    (folder / "assignment.toml").write_text(example)
    spec = load_assignment(folder / "assignment.toml")
    assert spec.name == "transformer" and spec.checks["rope"].only == {"positions": ("rope",)}
    used: set[str] = set()
    tables = [tomllib.loads(example)]
    while tables:
        table = tables.pop()
        used |= set(table)
        tables += [value for value in table.values() if isinstance(value, dict)]
    limits = {"cpu_s", "wall_s", "processes", "file_mb", "open_files", "gpu_memory_mb"}  # the table lists them
    assert not _allowed_toml_keys() - used - limits, sorted(_allowed_toml_keys() - used - limits)


def _template_variables() -> set[str]:
    """The names templates.render gives every template: its context's keys (each variant's name aside)."""
    for node in ast.walk(_module_source("declare.templates")):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "context":
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    raise AssertionError("templates.render has no `context`")


def test_every_template_variable_is_described():
    page = (DOCS / "templates.md").read_text(encoding="utf-8")
    names = _template_variables()
    assert {"title", "name", "files", "grading_table", "check_command"} <= names
    missing = sorted(name for name in names if f"| `{name}` |" not in page)
    assert not missing, f"docs/templates.md does not describe the template variables {missing}"
    assert "| each variant's name |" in page  # render passes **variant too


def _builtin_assignments() -> list[str]:
    """The assignments lmgrade's own pyproject.toml registers."""
    return list(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]["lmgrade"]
    )


def test_the_pages_that_list_the_assignments_name_every_one():
    guide = " ".join((DOCS / "instructor-guide.md").read_text(encoding="utf-8").split())
    same_for = guide[guide.index("Each step is the same for") :].split(";")[0]
    sections = re.findall(r"^## (\w+)$", (DOCS / "assignments.md").read_text(encoding="utf-8"), flags=re.M)
    for name in _builtin_assignments():
        assert f"`{name}`" in same_for, f"the instructor guide's steps leave out {name}"
        assert name in sections, f"docs/assignments.md has no section on {name}"
