"""`lmgrade new NAME -o DIR`: a working external assignment package to start from.

The package is the folder ``package_template`` beside this module, each file
with ``.tmpl`` added to its name (so that its Python is neither imported nor
linted as lmgrade's own, nor its tests collected), and these words replaced
in the files' names and text:

- ``__NAME__``: the assignment's name (``softmax``);
- ``__PACKAGE__``: the Python package, ``lmgrade_NAME``;
- ``__DIST__``: the distribution's name after ``lmgrade-``, NAME with ``-`` for ``_``.

What it writes is a whole assignment (softmax and log-softmax in numpy: a
reference, a stub template and a handout, a numeric check per function and a
property check, a known mistake, a bug declared from it and one of its own,
the reviewed equivalent mutants, a correct submission in another style, and
tests that call `lmgrade.prove.selftest.run_selftest`): installed, it is listed and
passes its own tests and ``lmgrade selftest NAME`` as it is.
docs/authoring-kit.md walks through it.

``lmgrade new NAME --torch`` writes from ``package_template_torch`` instead: RMSNorm and a residual MLP
block in PyTorch, with modules built by the stub and loaded with the case's weights, float64 and float32
cases, a composed check with the grader's stand-in, a timing check sized so that a loop over rows fails it
clearly, a known mistake, its bug and the reviewed equivalent mutants; torch preloaded and its own RMSNorm
forbidden.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "package_template"
TORCH_TEMPLATE = Path(__file__).resolve().parents[1] / "package_template_torch"
SUFFIX = ".tmpl"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class ScaffoldError(ValueError):
    """A name that cannot be an assignment's, or a folder that would be overwritten: one line, said to the user."""


def words(name: str) -> dict[str, str]:
    """What each word of the template stands for, for assignment `name`."""
    return {"__NAME__": name, "__PACKAGE__": f"lmgrade_{name}", "__DIST__": name.replace("_", "-")}


def check_name(name: str) -> None:
    """Refuse a name that is no lowercase Python identifier (the assignment's folder and its package's
    name are made from it) or that is a keyword."""
    if not NAME.match(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"{name!r} cannot name an assignment: use a lowercase letter, then up to 39 lowercase letters, "
            "digits or underscores (not a Python keyword)"
        )


def _filled(text: str, replacements: dict[str, str]) -> str:
    for word, value in replacements.items():
        text = text.replace(word, value)
    return text


# Files whose name starts with a dot, kept without it in the template: a wheel's package data leaves
# dotfiles out (setuptools' glob does not match them).
DOTTED = {"gitignore": ".gitignore"}


def template_files(template: Path = TEMPLATE) -> list[Path]:
    """The template's files, in a stable order."""
    return sorted(p for p in template.rglob(f"*{SUFFIX}") if "__pycache__" not in p.parts)


def write_package(name: str, out_dir: Path, *, torch: bool = False) -> list[Path]:
    """Write the package of assignment `name` into `out_dir` (new, or empty); return the files written.
    `torch`: the PyTorch template."""
    check_name(name)
    template = TORCH_TEMPLATE if torch else TEMPLATE
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise ScaffoldError(f"{out_dir} already exists and is not an empty folder: nothing was written")
    replacements = words(name)
    planned = []
    for source in template_files(template):
        relative = source.relative_to(template).as_posix()[: -len(SUFFIX)]
        relative = DOTTED.get(relative, relative)
        text = _filled(source.read_text(encoding="utf-8"), replacements)
        planned.append((out_dir / _filled(relative, replacements), text))
    written = []
    for target, text in planned:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
