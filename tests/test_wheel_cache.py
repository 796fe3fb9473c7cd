"""A wheel is built once for the same files: the zip's seconds go to grading, not to pip."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lmgrade.course.gradescope import wheel


def _fake_pip(calls: list):
    """pip wheel as a stand-in: writes a wheel named after the project's one file, and counts its builds."""

    def run(args, **kwargs):
        out, project = Path(args[args.index("--wheel-dir") + 1]), Path(args[-1])
        calls.append(project)
        (out / f"demo-{(project / 'demo.py').read_text().strip()}-py3-none-any.whl").write_bytes(b"zip")
        return subprocess.CompletedProcess(args, 0, "", "")

    return run


def test_the_same_files_reuse_the_wheel_and_a_changed_file_builds_anew(tmp_path, monkeypatch):
    monkeypatch.setenv("LMGRADE_CACHE", str(tmp_path / "cache"))
    calls: list = []
    monkeypatch.setattr(wheel.subprocess, "run", _fake_pip(calls))
    project = tmp_path / "project"
    project.mkdir()
    (project / "demo.py").write_text("1\n")

    first = wheel._pip_wheel(project, tmp_path / "a", "demo")
    again = wheel._pip_wheel(project, tmp_path / "b", "demo")
    assert len(calls) == 1 and first.name == again.name == "demo-1-py3-none-any.whl"
    assert again.parent == tmp_path / "b" and again.read_bytes() == b"zip"

    (project / "demo.py").write_text("2\n")
    changed = wheel._pip_wheel(project, tmp_path / "c", "demo")
    assert len(calls) == 2 and changed.name == "demo-2-py3-none-any.whl"


def test_no_cache_builds_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("LMGRADE_CACHE", "off")
    calls: list = []
    monkeypatch.setattr(wheel.subprocess, "run", _fake_pip(calls))
    project = tmp_path / "project"
    project.mkdir()
    (project / "demo.py").write_text("1\n")
    for out in ("a", "b"):
        assert wheel._pip_wheel(project, tmp_path / out, "demo").is_file()
    assert len(calls) == 2
