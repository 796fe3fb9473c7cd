"""A zip run on this machine as Gradescope runs it: `lmgrade gradescope --try`, the tests, the benchmarks.

The zip is unpacked into folders laid out like /autograder and installed by
its own setup.sh into a throwaway virtual environment, with the local-run
settings of both scripts: the root (``LMGRADE_GRADESCOPE_ROOT``), the
environment's place (``LMGRADE_GRADESCOPE_VENV``), no apt-get and no new
accounts on this machine (``LMGRADE_GRADESCOPE_SYSTEM_STEPS=0``), torch from
pip's own configuration (``LMGRADE_TORCH_INDEX_URL=``). Not for Gradescope.

The environment is either a fresh one, where pip installs every requirement
(what Gradescope's image does, and the minute it takes), or one that reuses
the libraries this interpreter has installed (`this_environments_libraries`),
where pip installs only what they lack: lmgrade and the assignment's package
come from the zip's wheels either way.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ...declare.plugin_manager import GROUP
from ...sandbox.reads import SITE_NAMES
from .layout import ROOT_ENV, Layout

VENV_ENV = "LMGRADE_GRADESCOPE_VENV"
# What Gradescope writes beside the submission folder: who submitted, when (a made-up student here).
SUBMISSION_METADATA = "submission_metadata.json"
LOCAL_SUBMITTER_METADATA = {
    "id": 1,
    "created_at": "2000-01-01T00:00:00.000000-00:00",
    "submission_method": "upload",
    "users": [{"email": "student@example.com", "id": 1, "name": "A Student", "sid": "1"}],
    "previous_submissions": [],
}
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
        """A fresh folder laid out like /autograder: the unpacked zip, a submission of `files`, and the
        submission's metadata, as Gradescope writes it beside the submission, for a made-up student."""
        layout = Layout(Path(os.path.realpath(self.workdir)) / f"autograder-{time.monotonic_ns()}")
        with zipfile.ZipFile(self.zip_path) as zf:
            zf.extractall(layout.source)
        layout.submission.mkdir()
        layout.results_folder.mkdir()
        (layout.root / SUBMISSION_METADATA).write_text(json.dumps(LOCAL_SUBMITTER_METADATA), encoding="utf-8")
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


def _carried_by_a_zip(dist: importlib.metadata.Distribution) -> bool:
    """lmgrade, or an assignment package: what a zip brings as wheels of its own."""
    name = (dist.metadata["Name"] or "").lower()
    return name == "lmgrade" or any(ep.group == GROUP for ep in dist.entry_points)


def _installed_names(dist: importlib.metadata.Distribution) -> set[str]:
    """The top-level names `dist` put in its site folder: its packages, modules, .pth files, metadata folder."""
    names = {Path(str(f)).parts[0] for f in dist.files or [] if Path(str(f)).parts and ".." not in Path(str(f)).parts}
    folder = getattr(dist, "_path", None)  # the metadata folder, also where there is no RECORD
    if folder is not None:
        names.add(Path(folder).name)
    return names


def this_environments_libraries(into: Path) -> Path:
    """A folder of links to the libraries this interpreter has installed, lmgrade and assignment packages aside.

    A virtual environment whose .pth file names it finds the zip's requirements already installed where
    this interpreter has them. Left out: lmgrade and every assignment package (the zip's wheels bring
    those it carries, and on Gradescope no other is installed), and the .pth files, so that no editable
    install of this machine reaches the run. `into` must lie outside the virtual environment: pip then
    sees these libraries as not its own and never uninstalls or changes them.
    """
    into.mkdir(parents=True)
    folders = [Path(p) for p in sys.path if os.path.basename(p.rstrip(os.sep)) in SITE_NAMES and os.path.isdir(p)]
    hidden = {
        name
        for dist in importlib.metadata.distributions(path=[str(f) for f in folders])
        if _carried_by_a_zip(dist)
        for name in _installed_names(dist)
    }
    for folder in folders:
        for entry in sorted(folder.iterdir()):
            name = entry.name
            if name in hidden or name == "__pycache__" or name.endswith((".pth", ".egg-link")):
                continue
            if name.startswith("__editable__") or (into / name).exists() or (into / name).is_symlink():
                continue  # an editable install's finder; a name an earlier folder gave first
            (into / name).symlink_to(entry)
    return into


def reusing_this_environment(venv: Path, libraries: Path) -> Path:
    """A virtual environment of this interpreter that also sees `libraries` (this_environments_libraries)."""
    # setup.sh's own `python3 -m venv` installs pip into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "lmgrade-this-environment.pth").write_text(f"{libraries}\n", encoding="utf-8")
    return venv


def install(zip_path: Path, workdir: Path, venv: Path, *, reuse_this_environment: bool = False) -> LocalInstall:
    """Run the zip's setup.sh into `venv` (an existing one is reused) with this interpreter's `python3`.

    `reuse_this_environment`: a new `venv` that reuses this interpreter's libraries, so pip installs only
    the requirements they lack (`this_environments_libraries`); else pip installs them all.
    """
    workdir = Path(workdir)
    if reuse_this_environment:
        reusing_this_environment(Path(venv), this_environments_libraries(workdir / f"libraries-{time.monotonic_ns()}"))
    source = workdir / f"setup-{time.monotonic_ns()}" / "source"
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
