"""Render an assignment's Jinja templates: the student stubs and the handout."""

from __future__ import annotations

from pathlib import Path

import jinja2

from .assignment import Assignment, AssignmentError
from .handout import check_command, grading_table


def render(assignment: Assignment, variant: dict) -> dict[str, str]:
    """{output file name: text} for every template of the assignment."""
    spec = assignment.spec
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(spec.root)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    context = {
        "name": spec.name,
        "title": spec.title,
        "files": spec.files,
        "variant": variant,
        "checks": assignment.checks,
        "grading_table": grading_table(assignment.checks),
        "check_command": check_command(spec.name, variant, {k: v.default for k, v in spec.variants.items()}),
        **variant,
    }
    out = {}
    for output, path in spec.templates.items():
        relative = path.relative_to(spec.root).as_posix()
        try:
            out[output] = env.get_template(relative).render(context)
        except jinja2.TemplateSyntaxError as exc:
            raise AssignmentError(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from None
        except jinja2.UndefinedError as exc:
            raise AssignmentError(f"{path}: {exc.message}") from None
    return out


class WouldOverwrite(Exception):
    """`out_dir` already holds files that generate would replace (a student's work, perhaps)."""

    def __init__(self, names: list[str]):
        super().__init__(", ".join(names))
        self.names = names


def generate(assignment: Assignment, variant: dict, out_dir: Path, overwrite: bool = False) -> list[Path]:
    """Write the rendered files into `out_dir`; return their paths.

    Unless `overwrite`, refuses (writing nothing) when any of them exists.
    """
    rendered = render(assignment, variant)
    existing = sorted(name for name in rendered if (out_dir / name).exists())
    if existing and not overwrite:
        raise WouldOverwrite(existing)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered.items():
        target = out_dir / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
