"""The authoring kit: `lmgrade new` writes a working assignment package, `lmgrade selftest` proves an
assignment's graders (and fails, with its reason, where a proof does not hold), `Bug.from_mistake`
declares a bug from a known mistake's edit.

A generated package is loaded here without installing it: its folder on sys.path with a dist-info
naming its entry point, as pip would leave it. One slow test installs it into a virtual environment.
"""

from __future__ import annotations

import importlib
import os
import re
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, TEST_SECRET, invoke, lmgrade
from lmgrade import Bug, Mistake
from lmgrade.declare import catalog
from lmgrade.declare.checks import Case, CaseVerdict, Check
from lmgrade.declare.flawed import apply, without_docstring, write_flawed
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.declare.scaffold import DOTTED, TEMPLATE, words, write_package
from lmgrade.prove.selftest import Disproved, loses_where_it_says, selftest
from lmgrade.reports.results import Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NAME = "demo_assignment"
PACKAGE = words(NAME)["__PACKAGE__"]


def as_installed(folder: Path, name: str = NAME) -> Path:
    """The generated package's folder as a site directory: a dist-info with its entry point and metadata."""
    data = tomllib.loads((folder / "pyproject.toml").read_text())
    project = data["project"]
    dist = folder / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    points = project["entry-points"]["lmgrade"]
    (dist / "entry_points.txt").write_text("[lmgrade]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    return folder


@pytest.fixture
def generated(tmp_path, monkeypatch):
    """`lmgrade new demo_assignment` written into a folder, importable and found through its entry point."""
    folder = tmp_path / "lmgrade-demo-assignment"
    out = invoke("new", NAME, "-o", folder)
    assert out.exit_code == 0, out.output
    as_installed(folder)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    yield folder
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


# --- Bug.from_mistake ------------------------------------------------------------------------------

EDIT = ("stats.py", "/ len(values)", "/ (len(values) - 1)")


def test_a_bug_declared_from_a_mistake_makes_its_edit():
    mistake = Mistake("off_by_one", "divides by len(values) - 1", edits=(EDIT,))
    bug = Bug.from_mistake(mistake, {"mean": "len(values) - 1"}, demo=True, variant={"k": "v"})
    assert (bug.file, bug.edits, bug.loses, bug.demo, bug.variant) == (
        "stats.py",
        (("/ len(values)", "/ (len(values) - 1)"),),
        {"mean": "len(values) - 1"},
        True,
        {"k": "v"},
    )
    assert bug.what == "divides by len(values) - 1."  # the explanation, where no words are given
    assert Bug.from_mistake(mistake, {}, "my words.").what == "my words."


def test_only_a_mistake_made_by_edits_in_one_file_is_a_bug():
    with pytest.raises(ValueError, match="edits alone"):
        Bug.from_mistake(Mistake("patched", "x", patch=lambda modules: None), {})
    with pytest.raises(ValueError, match="edits alone"):
        Bug.from_mistake(Mistake("both", "x", patch=lambda modules: None, edits=(EDIT,)), {})
    with pytest.raises(ValueError, match="one file"):
        Bug.from_mistake(Mistake("two_files", "x", edits=(EDIT, ("other.py", "a", "b"))), {})


def test_the_rnn_bugs_declared_from_mistakes_are_the_mistakes(tmp_path):
    """A catalogue bug declared from a mistake makes the flawed file the grader makes for the mistake."""
    from lmgrade.plugins.rnn import mistakes

    assignment, _ = catalog.load("rnn")
    reference = assignment.spec.reference_folder()
    bugs = catalog.bugs("rnn")
    for key, mistake in (
        ("bptt_no_carry", mistakes.BPTT_NO_CARRY),
        ("transposed_w_ah_gradient", mistakes.TRANSPOSED_W_AH),
    ):
        bug = bugs[key]
        ((file, _, _),) = mistake.edits
        written = write_flawed(reference, assignment.spec.files, tmp_path / key, [bug])
        made = apply((reference / file).read_text(), tuple((o, n) for _, o, n in mistake.edits), key)
        assert (written / file).read_text().split("\n\n", 1)[1] == without_docstring(made), key
        assert bug.loses and bug.what


# --- lmgrade new -----------------------------------------------------------------------------------


def test_new_writes_every_file_of_the_template_filled_in(generated):
    files = {p.relative_to(generated).as_posix() for p in generated.rglob("*") if p.is_file()}
    expected = {
        DOTTED.get(name, name)
        for name in (
            re.sub(r"\.tmpl$", "", p.relative_to(TEMPLATE).as_posix())
            .replace("__PACKAGE__", PACKAGE)
            .replace("__NAME__", NAME)
            for p in TEMPLATE.rglob("*.tmpl")
        )
    }
    assert expected <= files
    for path in expected:
        text = (generated / path).read_text()
        assert not re.search(r"__(NAME|PACKAGE|DIST)__", text), path
    assert f"{PACKAGE}/{NAME}/assignment.toml" in files and f"tests/submissions/{NAME}/loops/softmax.py" in files
    # What building and grading leave in the folder is kept out of the package author's commits.
    assert {"__pycache__/", "*.egg-info/", "results.json"} <= set((generated / ".gitignore").read_text().split())


def test_the_generated_pyproject_ships_every_file_lmgrade_reads(generated):
    """Its packages are every folder with an __init__.py; its package-data every other file of them."""
    from setuptools import find_packages

    data = tomllib.loads((generated / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["lmgrade"] == {NAME: f"{PACKAGE}:plugin"}
    packages = data["tool"]["setuptools"]["packages"]
    assert sorted(packages) == sorted(find_packages(str(generated), exclude=["tests*"]))
    globs = data["tool"]["setuptools"]["package-data"][PACKAGE]
    root = generated / PACKAGE
    shipped = {p for g in globs for p in root.glob(g)}
    data_files = {p for p in root.rglob("*") if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts}
    assert data_files == shipped and {"equivalent_mutants.toml", "assignment.toml"} <= {p.name for p in shipped}


def test_the_generated_code_is_linted_clean(generated):
    """The template is not linted as lmgrade's own code (its files end in .tmpl): what it writes is, here,
    with the project's rules and lmgrade a third-party package, as in the author's own project."""
    pytest.importorskip("ruff")
    rules = ["--isolated", "--line-length", "120", "--target-version", "py310"]
    for command in (["check", "--select", "E,F,W,I,B,UP"], ["format", "--check"]):
        out = subprocess.run(
            [sys.executable, "-m", "ruff", *command, *rules, str(generated)], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stdout + out.stderr


def test_the_generated_assignment_is_listed_from_its_package(generated):
    found = catalog.sources(make_manager())
    assert found[NAME].distribution == "lmgrade-demo-assignment"
    assignment, _ = catalog.load(NAME, make_manager())
    assert [c.name for c in assignment.checks] == ["softmax", "log_softmax", "softmax_unchanged"]
    assert any(c.property_check for c in assignment.checks) and any(c.mistakes for c in assignment.checks)
    bugs = catalog.bugs(NAME, make_manager())
    assert set(bugs) == {"wrong_axis", "shifts_in_place"}
    # The bug declared from the mistake makes the mistake's edit: written once, in mistakes.py.
    mistake = next(m for c in assignment.checks for m in c.mistakes)
    assert bugs["wrong_axis"].edits == tuple((old, new) for _, old, new in mistake.edits)


def test_new_refuses_a_bad_name_an_installed_one_and_a_folder_in_use(tmp_path):
    for name, words_said in (("Bad-Name", "cannot name an assignment"), ("class", "keyword"), ("ngram", "installed")):
        out = invoke("new", name, "-o", tmp_path / name)
        assert out.exit_code == 2 and words_said in out.output, out.output
        assert not (tmp_path / name).exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "mine.txt").write_text("kept")
    out = invoke("new", NAME, "-o", tmp_path / "used")
    assert out.exit_code == 2 and "not an empty folder" in out.output
    assert [p.name for p in (tmp_path / "used").iterdir()] == ["mine.txt"]
    with pytest.raises(ValueError):
        write_package("x-y", tmp_path / "other")


# --- lmgrade selftest ------------------------------------------------------------------------------


def test_the_generated_package_passes_selftest_as_it_is(generated):
    started = time.perf_counter()
    made = selftest(
        NAME, pm=make_manager(), submissions=generated / "tests" / "submissions" / NAME, secret=TEST_SECRET, jobs=2
    )
    seconds = time.perf_counter() - started
    assert all(p.passed for p in made), made[-1].line()
    assert [p.name for p in made] == [
        "reference",
        "stub",
        "constant None",
        "constant 0",
        "constant 1.0",
        "constant []",
        "constant {}",
        "raising",
        "bug wrong_axis",
        "bug shifts_in_place",
        "contract loops",
        "mistakes named elsewhere",
    ]
    assert made[-3].detail.startswith("loses on softmax_unchanged")
    print(f"selftest {NAME}: {seconds:.1f} s")


def _check(name: str, composes: tuple[str, ...] = ()) -> Check:
    return Check(name, name, lambda modules, args: None, lambda ctx: [], composes=composes, points=10)


def _verdicts(scores: dict[str, float], outputs: dict[str, str], checks: list[Check]) -> list[Verdict]:
    case = Case("c", {})
    return [
        Verdict(c, n, scores.get(c.name, 10), outputs.get(c.name, ""), [(case, CaseVerdict(True))])
        for n, c in enumerate(checks, start=1)
    ]


def test_a_bug_proof_says_why_it_does_not_hold():
    """Loses nothing on a check it names; loses without the catalogue's words; loses elsewhere."""
    from lmgrade.declare.assignment import Assignment

    checks = [_check("a"), _check("b", composes=("a",)), _check("c")]
    assignment = Assignment(catalog.load_spec("ngram"), checks)
    bug = Bug("x", "ngram.py", (), {"a": "wrong value"})
    with pytest.raises(Disproved, match="loses nothing on a"):
        loses_where_it_says(bug, _verdicts({}, {}, checks), assignment)
    with pytest.raises(Disproved, match="does not say 'wrong value'"):
        loses_where_it_says(bug, _verdicts({"a": 0}, {"a": "0/3 cases passed"}, checks), assignment)
    with pytest.raises(Disproved, match="also loses on c"):
        loses_where_it_says(bug, _verdicts({"a": 0, "c": 5}, {"a": "wrong value"}, checks), assignment)
    with pytest.raises(Disproved, match="no check of ngram"):
        loses_where_it_says(Bug("x", "ngram.py", (), {"z": ""}), _verdicts({}, {}, checks), assignment)
    # Losing on a check that composes the named one is allowed: one bug, one place, seen from there too.
    said = loses_where_it_says(bug, _verdicts({"a": 0, "b": 0}, {"a": "wrong value"}, checks), assignment)
    assert said.startswith("loses on a; also on b, which composes them (")
    assert loses_where_it_says(bug, _verdicts({"a": 0}, {"a": "wrong value"}, checks), assignment).startswith(
        "loses on a ("
    )


HARMLESS = """
BUGS["harmless"] = Bug(
    "softmax converts an array that is float64 already.",
    "softmax.py",
    (("    x = np.asarray(x, dtype=np.float64)\\n    e =", "    x = np.array(x, dtype=np.float64)\\n    e ="),),
    {"softmax": ""},
)
"""


def test_a_bug_that_loses_nothing_makes_selftest_exit_1_with_its_reason(generated):
    bugs = generated / PACKAGE / "bugs.py"
    bugs.write_text(bugs.read_text() + HARMLESS)
    out = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "selftest", NAME, "--jobs", "2"],
        cwd=generated,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(generated), "LMGRADE_SECRET": TEST_SECRET},
        timeout=300,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-1].startswith("FAIL bug harmless: loses nothing on softmax (40/40)"), out.stdout
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "ok   reference",
        "ok   stub",
        *[f"ok   constant {c}" for c in ("None", "0", "1.0", "[]", "{}")],
        "ok   raising",
        "ok   bug wrong_axis",
        "ok   bug shifts_in_place",
    ]  # one line per proof, and none after the first that fails (the contract submission is not graded)


def test_selftest_refuses_an_unknown_assignment_or_variant():
    out = invoke("selftest", "no_such_assignment")
    assert out.exit_code == 2 and "unknown assignment" in out.output
    out = invoke("selftest", "ngram", "--set", "colour=red")
    assert out.exit_code == 2 and "no variant 'colour'" in out.output


@pytest.mark.slow
@pytest.mark.study  # every proof of a built-in assignment: test_assignments.py makes them one by one
def test_selftest_proves_the_ngram_graders(tmp_path):
    """Every proof of a built-in assignment holds: its reference, stub, submissions that do no work, each
    catalogue bug, each correct submission of tests/submissions/ngram (found from the repository root)."""
    started = time.perf_counter()
    out = lmgrade("selftest", "ngram", cwd=ROOT, timeout=900)
    seconds = time.perf_counter() - started
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.strip().splitlines()
    proofs = [line for line in lines if line.startswith(("ok", "FAIL"))]
    assert all(line.startswith("ok") for line in proofs)
    bugs, submissions = catalog.bugs("ngram"), sorted(p.name for p in (ROOT / "tests/submissions/ngram").iterdir())
    assert len(proofs) == 2 + 6 + len(bugs) + len(submissions) + 1  # the last: mistakes named elsewhere
    assert {f"bug {b}" for b in bugs} | {f"contract {s}" for s in submissions} <= {
        line[5:].split(":")[0] for line in proofs
    }
    assert lines[-1] == f"ngram: {len(proofs)} proofs hold"
    print(f"selftest ngram: {seconds:.1f} s")


@pytest.mark.slow
def test_the_generated_package_installs_is_listed_and_passes_its_own_tests(tmp_path):
    """`lmgrade new`, then pip install (no -e: its package-data must ship), then `lmgrade list` and its own
    tests (python -m pytest, which run `lmgrade selftest`'s proofs on the installed package) in a virtual
    environment that sees this one's lmgrade."""
    folder = tmp_path / "lmgrade-demo-assignment"
    out = lmgrade("new", NAME, "-o", folder)
    assert out.returncode == 0, out.stderr
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    (added,) = (venv / "lib").glob("python3*/site-packages")
    (added / "outer.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages()))
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check", str(folder)]
    installed = subprocess.run(pip, capture_output=True, text=True, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "LMGRADE_SECRET": TEST_SECRET, "PYTHONPATH": ""}
    env.pop("PYTEST_ADDOPTS", None)

    def run(*args, cwd):
        return subprocess.run([python, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)

    listed = run("-m", "lmgrade.cli", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "from the package lmgrade-demo-assignment 0.1.0" in listed.stdout
    # Its files come from site-packages, not from the folder it was written into.
    where = run("-c", f"import {PACKAGE}; print({PACKAGE}.__file__)", cwd=tmp_path)
    assert "site-packages" in where.stdout, where.stdout + where.stderr
    # Run from beside the folder, so that `python -m` puts no copy of the package on sys.path.
    tests = run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "tests"), cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout
