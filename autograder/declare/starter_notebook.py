"""An assignment's starter notebook: the handout, a ``%%writefile`` cell per stub, and a cell that checks.

Untouched, it grades as the stubs do (notebook.py reads what its cells write).
"""

from __future__ import annotations

from pathlib import Path

from . import templates
from .handout import check_command

YOUR_CODE = """## Your code

Each code cell below that begins with `%%writefile FILE` is one file of your submission. Write your code
under that first line, leave the line as it is, and run the cell: it saves the file beside this notebook.

Submit this notebook (or the files its cells write). The grader reads the cells that begin with
`%%writefile FILE` as your files and runs no cell of the notebook: code in any other cell is not graded.
`%%writefile -a FILE` adds a cell's code to the end of FILE, and `%%writefile helpers.py` writes a helper
module that your files may import."""

CHECK_YOUR_WORK = """## Check your work

Run the cells above, then the next one: it runs the public checks on the files they wrote. It needs the
`lmgrade` command, which the course's student bundle installs (its CHECKING.md says how)."""


def starter_name(assignment) -> str:
    """The file name of the assignment's starter notebook."""
    return f"{assignment.spec.name}.ipynb"


def markdown_sections(text: str) -> list[str]:
    """`text` cut before each `## ` heading that is not inside a fenced code block: one cell per section."""
    sections, current, fenced = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.startswith("## ") and not fenced and any(s.strip() for s in current):
            sections.append("\n".join(current).strip("\n"))
            current = []
        current.append(line)
    if any(s.strip() for s in current):
        sections.append("\n".join(current).strip("\n"))
    return sections


def starter(assignment, variant: dict):
    """The starter notebook of `assignment` in `variant`, as an nbformat node.

    The handout as markdown cells, one ``%%writefile FILE`` cell per stub (the
    stub as `generate` renders it), and a cell that runs the public checks.
    Untouched, it grades as the stubs do; with each cell's body replaced by
    a solution's file, as that solution. Cell ids are fixed, so the same
    assignment and variant give the same notebook.
    """
    import nbformat

    spec = assignment.spec
    rendered = templates.render(assignment, variant)
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell(section)
        for name, text in rendered.items()
        if name.endswith(".md") and name not in spec.files
        for section in markdown_sections(text)
    ]
    cells.append(v4.new_markdown_cell(YOUR_CODE))
    cells += [v4.new_code_cell(f"%%writefile {name}\n{rendered[name].rstrip(chr(10))}") for name in spec.files]
    cells.append(v4.new_markdown_cell(CHECK_YOUR_WORK))
    defaults = {key: v.default for key, v in spec.variants.items()}
    cells.append(v4.new_code_cell(f"!{check_command(spec.name, variant, defaults)} ."))
    for number, cell in enumerate(cells, start=1):
        cell["id"] = f"cell-{number}"
    return v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )


def starter_text(assignment, variant: dict) -> str:
    """The starter notebook as the text of an .ipynb file."""
    import nbformat

    return nbformat.writes(starter(assignment, variant)) + "\n"


def write_starter(assignment, variant: dict, out_dir: Path, overwrite: bool = False) -> Path:
    """Write the starter notebook into `out_dir`; return its path.

    Unless `overwrite`, refuses (`templates.WouldOverwrite`, writing nothing)
    where a file of its name exists: perhaps the student's work.
    """
    target = out_dir / starter_name(assignment)
    if target.exists() and not overwrite:
        raise templates.WouldOverwrite([target.name])
    text = starter_text(assignment, variant)
    out_dir.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
