"""`python3 dev.py setup` says where it is: one line per step, then how long it took; a set-up already done
says nothing. The steps' work (venv, pip, compileall) is replaced here by recording stubs."""

from __future__ import annotations

import importlib.util
import subprocess

from helpers import ROOT


def dev_module(monkeypatch, venv_folder):
    monkeypatch.setenv("LMGRADE_VENV", str(venv_folder))
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    done = []
    monkeypatch.setattr(module, "run", lambda *args: done.append(args))
    monkeypatch.setattr(module, "compile_all", lambda *folders: done.append(("compileall", *folders)))
    monkeypatch.setattr(
        module.venv.EnvBuilder, "create", lambda self, folder: (folder.mkdir(parents=True), done.append(("venv",)))
    )
    monkeypatch.setattr(
        module.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout="/site\n", stderr="")
    )
    return module, done


def test_setup_prints_one_line_per_step_and_its_time(monkeypatch, tmp_path, capsys):
    dev, done = dev_module(monkeypatch, tmp_path / "venv")
    dev.setup()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in lines[:4]] == [f"set-up {n}/4" for n in range(1, 5)]
    assert "creating the environment" in lines[0] and "installing torch" in lines[1]
    assert "lmgrade with its test and docs extras" in lines[2] and "byte-compiling" in lines[3]
    assert lines[4].startswith("set-up done in ") and len(lines) == 5
    assert done[0] == ("venv",) and done[-1] == ("compileall", "/site")


def test_a_setup_already_done_says_nothing(monkeypatch, tmp_path, capsys):
    dev, done = dev_module(monkeypatch, tmp_path / "venv")
    dev.setup()
    capsys.readouterr()
    done.clear()
    dev.setup()
    assert capsys.readouterr().out == "" and done == []
