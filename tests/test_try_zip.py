"""`lmgrade gradescope NAME -o ZIP --try SUBMISSION`: the zip built, installed and run as Gradescope runs it.

One command run on ngram's reference (full marks, printed), then the same
zip tried on the generated stub through the command's own function (0).
The environment it installs into reuses this interpreter's libraries but
never lmgrade's or an assignment package's own: those come from the zip.
An assignment package installed editable is carried as a wheel built from
its source folder.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT, TEST_SECRET, validate
from lmgrade.course.gradescope.local import clean_env, this_environments_libraries
from lmgrade.course.gradescope.trial import place_submission, try_zip
from lmgrade.course.gradescope.wheel import distribution_wheel, editable_source
from lmgrade.declare import catalog, templates

TINY = ROOT / "docs" / "examples" / "lmgrade-tiny"


@pytest.fixture(scope="module")
def tried_reference(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The command run once on ngram's reference: the zip it wrote, and what it printed."""
    tmp = tmp_path_factory.mktemp("try")
    spec = catalog.load_spec("ngram")
    reference = tmp / "reference"
    reference.mkdir()
    for name in spec.files:
        shutil.copy(spec.reference_folder() / name, reference / name)
    out = tmp / "ngram.zip"
    proc = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "gradescope", "ngram", "-o", str(out), "--try", str(reference)],
        capture_output=True,
        text=True,
        env=clean_env(LMGRADE_CACHE=os.environ["LMGRADE_CACHE"], LMGRADE_SECRET=TEST_SECRET, COLUMNS="200"),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc


@pytest.mark.slow
def test_try_grades_the_reference_with_the_zip_and_prints_the_results(tried_reference):
    out, proc = tried_reference
    assert out.is_file()
    timing = re.search(
        r"tried: setup\.sh took ([\d.]+) s, run_autograder ([\d.]+) s \(exit status 0\), 11 tests", proc.stdout
    )
    assert timing, proc.stdout
    print(f"--try: setup.sh {timing.group(1)} s, run_autograder {timing.group(2)} s")
    assignment, _ = catalog.load("ngram")
    rows = re.findall(r"│\s*\d+ │ (\w+): .*?│\s*([\d.]+) / ([\d.]+) │ (\w+)", proc.stdout)
    assert [(name, float(score), float(points), visibility) for name, score, points, visibility in rows] == [
        (c.name, c.points, c.points, c.visibility) for c in assignment.checks
    ]
    assert re.search(r"│\s*total\s*│\s*100 / 100 │", proc.stdout), proc.stdout
    assert TEST_SECRET not in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.study  # a second --try run; the suite tries the reference
def test_the_same_zip_tried_on_the_stub_scores_zero_and_says_why(tried_reference, tmp_path):
    stub = tmp_path / "stub"
    stub.mkdir()
    assignment, variant = catalog.load("ngram")
    for name, text in templates.render(assignment, variant).items():
        (stub / name).write_text(text)
    tried = try_zip(tried_reference[0], stub)
    assert tried.status == 0, tried.output
    validate(tried.document)
    assert tried.document["score"] == 0 and len(tried.document["tests"]) == len(assignment.checks)
    assert all(t["score"] == 0 < t["max_score"] for t in tried.document["tests"])
    assert all("not implemented" in t["output"] for t in tried.document["tests"])


def test_a_submission_arrives_as_uploaded(tmp_path):
    folder = tmp_path / "folder"
    (folder / "sub").mkdir(parents=True)
    (folder / "ngram.py").write_text("x = 1\n")
    (folder / "sub" / "notes.txt").write_text("n\n")
    notebook = tmp_path / "ngram.ipynb"
    notebook.write_text("{}")
    into = tmp_path / "submission"
    into.mkdir()
    place_submission(folder, into)
    place_submission(notebook, into)
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*")) == [
        "ngram.ipynb",
        "ngram.py",
        "sub",
        "sub/notes.txt",
    ]


def test_the_reused_libraries_leave_out_lmgrade_assignment_packages_and_pth_files(tmp_path):
    libraries = this_environments_libraries(tmp_path / "libraries")
    names = {p.name for p in libraries.iterdir()}
    import numpy

    numpy_folder = Path(numpy.__file__).resolve().parent
    assert (libraries / "numpy").resolve() == numpy_folder
    assert "pytest" in names and any(n.startswith("numpy-") and n.endswith(".dist-info") for n in names)
    assert not any(n.startswith("lmgrade-") or n.endswith(".pth") or n.startswith("__editable__") for n in names)
    assert "lmgrade" not in names


def fake_editable(site: Path, source: Path, editable: bool = True) -> None:
    """The metadata pip leaves for lmgrade-tiny installed from `source` (with -e where `editable`)."""
    info = site / "lmgrade_tiny-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lmgrade-tiny\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[lmgrade]\ntiny = tinylm.plugin:plugin\n")
    url = {"url": source.resolve().as_uri(), "dir_info": {"editable": True} if editable else {}}
    (info / "direct_url.json").write_text(json.dumps(url))


def test_an_editable_install_is_known_by_its_source_folder(tmp_path):
    for editable, expected in ((True, TINY.resolve()), (False, None)):
        site = tmp_path / f"site-{editable}"
        fake_editable(site, TINY, editable)
        (dist,) = importlib.metadata.distributions(path=[str(site)])
        assert editable_source(dist) == expected


@pytest.mark.slow
def test_an_editable_assignment_package_is_carried_as_a_wheel_of_its_source(tmp_path, monkeypatch):
    source = tmp_path / "lmgrade-tiny"
    shutil.copytree(TINY, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    before = sorted(p.relative_to(source) for p in source.rglob("*"))
    fake_editable(tmp_path / "site", source)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    wheel = distribution_wheel("lmgrade-tiny", tmp_path / "out")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert {"tinylm/checks.py", "tinylm/tiny/assignment.toml", "tinylm/reference/stats.py"} <= names, names
    assert "tiny = tinylm" in entry_points
    # Built from a copy: the source folder is left as it was (no build/, no .egg-info).
    assert sorted(p.relative_to(source) for p in source.rglob("*")) == before
