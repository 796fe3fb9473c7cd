"""A zip run on this machine as Gradescope runs it, for the test suite and the benchmarks.

The zip is unpacked into folders laid out like /autograder and installed by
its own setup.sh into a throwaway virtual environment, with the test-only
settings of both scripts: the root (``LMGRADE_GRADESCOPE_ROOT``), the
environment's place (``LMGRADE_GRADESCOPE_VENV``), no apt-get and no new
accounts on this machine (``LMGRADE_GRADESCOPE_SYSTEM_STEPS=0``), torch from
pip's own configuration (``LMGRADE_TORCH_INDEX_URL=``). Not for Gradescope.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .layout import ROOT_ENV, Layout

VENV_ENV = "LMGRADE_GRADESCOPE_VENV"
SYSTEM_STEPS_ENV = "LMGRADE_GRADESCOPE_SYSTEM_STEPS"
TORCH_INDEX_ENV = "LMGRADE_TORCH_INDEX_URL"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any of lmgrade's own settings, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("LMGRADE_")}, **extra}


class SetupFailed(RuntimeError):
    pass


@dataclass
class LocalInstall:
    """What a zip's setup.sh installed here; every run gets a fresh root unpacked from the zip."""

    zip_path: Path
    venv: Path
    workdir: Path
    setup_s: float  # how long setup.sh took

    def new_root(self, files: dict[str, str]) -> Layout:
        """A fresh folder laid out like /autograder: the unpacked zip, a submission of `files`."""
        layout = Layout(Path(os.path.realpath(self.workdir)) / f"autograder-{time.monotonic_ns()}")
        with zipfile.ZipFile(self.zip_path) as zf:
            zf.extractall(layout.source)
        layout.submission.mkdir()
        layout.results_folder.mkdir()
        for name, text in files.items():
            (layout.submission / name).write_text(text, encoding="utf-8")
        return layout

    def env(self, layout: Layout, **extra: str) -> dict[str, str]:
        return clean_env(**{ROOT_ENV: str(layout.root), VENV_ENV: str(self.venv)}, **extra)

    def start(self, layout: Layout, **extra: str) -> subprocess.Popen:
        """run_autograder as Gradescope starts it, from the root folder; output in one text pipe."""
        return subprocess.Popen(
            ["bash", str(layout.source / "run_autograder")],
            cwd=layout.root,
            env=self.env(layout, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def install(zip_path: Path, workdir: Path, venv: Path) -> LocalInstall:
    """Run the zip's setup.sh into `venv` (an existing one is reused) with this interpreter's `python3`."""
    source = Path(workdir) / f"setup-{time.monotonic_ns()}" / "source"
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
    env = clean_env(
        **{VENV_ENV: str(venv), SYSTEM_STEPS_ENV: "0", TORCH_INDEX_ENV: ""},
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    started = time.perf_counter()
    proc = subprocess.run(["bash", str(source / "setup.sh")], cwd=source, env=env, capture_output=True, text=True)
    setup_s = time.perf_counter() - started
    if proc.returncode != 0:
        raise SetupFailed(f"setup.sh failed with status {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return LocalInstall(Path(zip_path), Path(venv), Path(workdir), setup_s)
