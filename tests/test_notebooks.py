"""Notebook submissions (the files their cells write, no cell run) and starter notebooks (docs/notebooks.md)."""

from __future__ import annotations

import json
import shlex
import tracemalloc
from pathlib import Path

import click
import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import ROOT, lmgrade, variant_params
from lmgrade.cli.app import main
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog, starter_notebook, templates
from lmgrade.grading.submission_grading import grade_submission
from lmgrade.submissions import notebook, notebook_reader
from lmgrade.submissions.limits import UnreadableSubmission
from lmgrade.submissions.submitted_files import prepare

REFERENCE_NGRAM = (ROOT / "reference" / "ngram" / "ngram.py").read_text()


def _graded(ngram, ngram_grader, submission: Path, tmp_path: Path):
    """(the run, results.json) of grading `submission` (a notebook, or a folder) as ngram."""
    assignment, variant = ngram
    results = tmp_path / "results.json"
    run = grade_submission(assignment, variant, submission, results=results, grader=ngram_grader)
    document = json.loads(results.read_text())
    assert len(document["tests"]) == 11 and document["score"] == run.score
    return run, document


def _write(cells, path: Path) -> Path:
    """A notebook of `cells` (("code" | "markdown", source[, tags])) at `path`, as Jupyter saves one."""
    made = []
    for kind, source, *tags in cells:
        cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
        if tags:
            cell.metadata["tags"] = tags[0]
        made.append(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=made), str(path))
    return path


def _pasted(starter: Path, sources: dict[str, str], out: Path) -> Path:
    """The starter notebook with the body of each `%%writefile NAME` cell replaced by sources[NAME]."""
    node = nbformat.read(str(starter), as_version=4)
    replaced = set()
    for cell in node.cells:
        first, _, _ = cell.source.partition("\n")
        if cell.cell_type == "code" and first.startswith("%%writefile "):
            name = first.split()[1]
            cell.source = f"{first}\n{sources[name]}"
            replaced.add(name)
    assert replaced == set(sources)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(node, str(out))
    return out


# --- the starter notebook --------------------------------------------------------------------------


def test_the_starter_holds_the_handout_the_stubs_and_the_check_and_is_the_same_every_time(ngram, tmp_path):
    assignment, variant = ngram
    path = starter_notebook.write_starter(assignment, variant, tmp_path)
    assert path.name == "ngram.ipynb" and path.read_text() == starter_notebook.starter_text(assignment, variant)
    node = nbformat.read(str(path), as_version=4)
    nbformat.validate(node)
    rendered = templates.render(assignment, variant)
    markdown = "\n\n".join(c.source for c in node.cells if c.cell_type == "markdown")
    assert rendered["README.md"].strip() in markdown  # the handout, cut into cells at its sections
    code = [c.source for c in node.cells if c.cell_type == "code"]
    assert code == [f"%%writefile ngram.py\n{rendered['ngram.py'].rstrip()}", "!lmgrade check ngram ."]
    # What the grader reads back is the stub, byte for byte.
    assert notebook.written_files(node, assignment.spec.files).files == {"ngram.py": rendered["ngram.py"]}
    with pytest.raises(templates.WouldOverwrite):
        starter_notebook.write_starter(assignment, variant, tmp_path)


@pytest.mark.parametrize("name, settings", variant_params())
def test_every_starter_writes_its_stubs_and_checks_its_own_variant(name, settings):
    assignment, variant = catalog.load(Selection.parse(name, settings))
    node = starter_notebook.starter(assignment, variant)
    rendered = templates.render(assignment, variant)
    written = notebook.written_files(node, assignment.spec.files)
    assert written.files == {f: rendered[f] for f in assignment.spec.files} and written.refused == []
    (command,) = [c.source for c in node.cells if c.cell_type == "code" and c.source.startswith("!")]
    words = shlex.split(command[1:])
    with click.Context(main, info_name="lmgrade") as ctx:  # parsed as `lmgrade` parses it
        with main.get_command(ctx, words[1]).make_context(words[1], words[2:], parent=ctx) as parsed:
            params = parsed.params
    assert words[:3] == ["lmgrade", "check", name] and params["submission_dir"] == Path(".")
    chosen = dict(pair.split("=", 1) for pair in params["settings"])
    assert catalog.load(Selection(name, chosen))[1] == variant


def test_generate_notebook_writes_it_and_grade_scores_it_zero_not_implemented(tmp_path):
    made = lmgrade("generate", "ngram", "-o", tmp_path / "starter", "--notebook")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "starter").iterdir()) == ["ngram.ipynb"]
    results = tmp_path / "results.json"
    graded = lmgrade("grade", "ngram", tmp_path / "starter" / "ngram.ipynb", "--results", results)
    assert graded.returncode == 0, graded.stderr
    document = json.loads(results.read_text())
    assert document["score"] == 0 and all("not implemented" in t["output"] for t in document["tests"])
    assert "ngram.ipynb: graded the files its cells write (ngram.py)" in document["output"]


def test_the_reference_pasted_into_the_starter_scores_full_marks_from_a_folder_holding_only_it(
    ngram, ngram_grader, tmp_path
):
    starter = starter_notebook.write_starter(*ngram, tmp_path / "starter")
    upload = tmp_path / "upload"  # what Gradescope makes of an uploaded notebook
    _pasted(starter, {"ngram.py": REFERENCE_NGRAM}, upload / "my work.ipynb")
    run, document = _graded(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 100, document["output"]
    assert "my work.ipynb: graded the files its cells write (ngram.py); no cell of it was run." in document["output"]


def test_check_grades_a_notebook_with_the_public_checks(ngram, tmp_path):
    starter = starter_notebook.write_starter(*ngram, tmp_path / "starter")
    solved = _pasted(starter, {"ngram.py": REFERENCE_NGRAM}, tmp_path / "solved" / "ngram.ipynb")
    checked = lmgrade("check", "ngram", solved)
    assert checked.returncode == 0, checked.stderr
    assert "graded the files its cells write" in checked.stdout and "pad" in checked.stdout
    assert "90 / 90" in checked.stdout and "not implemented" not in checked.stdout
    # One case, run as grading runs it: from the notebook's files.
    case = lmgrade("check", "ngram", solved, "--case", "pad:1")
    assert case.returncode == 0, case.stderr
    assert "ngram.ipynb: graded the files its cells write" in case.stdout and "this case passes." in case.stdout


# --- a notebook as students write one in Colab -----------------------------------------------------


def test_a_colab_notebook_grades_from_its_file_cells_and_runs_none_of_its_cells(ngram, ngram_grader, tmp_path):
    markers = [tmp_path / f"marker{i}" for i in range(3)]
    head, _, tail = REFERENCE_NGRAM.partition("\ndef ")
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "beside.py").write_text("BESIDE = 3\n")  # a helper uploaded beside the notebook
    _write(
        [
            ("markdown", "# My n-gram model"),
            ("code", "!pip install numpy"),
            ("code", f"!touch {markers[0]}"),
            ("code", f"open({str(markers[1])!r}, 'w').write('ran')\nraise RuntimeError('this cell fails')"),
            ("code", "%%writefile ngram.py\nraise SyntaxError('replaced by the next cell of the same file')"),
            # The file in two cells, the second appended as %%writefile -a appends; it imports the helper
            # modules of a marked cell, a tagged cell and the upload's folder.
            ("code", f"%%writefile ngram.py\n{head}\nimport marked, tagged, beside  # noqa\n"),
            ("code", f"%%writefile -a ngram.py\ndef {tail}"),
            ("code", "# FILE: marked.py\nMARKED = 1"),
            ("code", "TAGGED = 2", ["file:tagged.py"]),
            ("code", f"import os\nos.system('touch {markers[2]}')\nimport ngram\nngram.pad(['a'], 2)"),
        ],
        upload / "Copy of ngram.ipynb",
    )
    run, document = _graded(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 100, document["output"]
    assert (
        "Copy of ngram.ipynb: graded the files its cells write (ngram.py, marked.py, tagged.py)" in document["output"]
    )
    assert not any(marker.exists() for marker in markers)  # no cell ran


def test_a_marked_file_is_written_whole_with_its_marker_line(ngram):
    node = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("\n\n# FILE: ngram.py\nx = 1"),
            nbformat.v4.new_code_cell("# FILE: -a ngram.py\ny = 2\n"),
            nbformat.v4.new_code_cell("%%file helper.py\nz = 3"),
            nbformat.v4.new_markdown_cell("%%writefile notes.py\nnot code"),
            nbformat.v4.new_code_cell("print('%%writefile later.py')"),
        ]
    )
    written = notebook.written_files(node, ngram[0].spec.files)
    assert written.files == {
        "ngram.py": "# FILE: ngram.py\nx = 1\n# FILE: -a ngram.py\ny = 2\n",
        "helper.py": "z = 3\n",
    }
    assert written.refused == []


def test_a_notebook_that_writes_none_of_the_files_gets_one_line_saying_what_was_expected(ngram, tmp_path):
    # Prepared as every command prepares a submission (grading it would only add checks saying
    # "missing from the submission (see above)").
    path = _write([("markdown", "my solution"), ("code", REFERENCE_NGRAM)], tmp_path / "hw.ipynb")
    (tmp_path / "scratch").mkdir()
    folder, said = prepare(path, ngram[0].spec.files, tmp_path / "scratch")
    assert list(folder.iterdir()) == []
    assert len(said) == 1 and "\n" not in said[0]  # one line, and nothing else said about the submission
    assert said[0].startswith("hw.ipynb writes none of the assignment's files: expected ngram.py")
    assert "`%%writefile ngram.py`" in said[0] and "`# FILE: ngram.py`" in said[0]
    # A notebook writing only a helper module says so in the same line.
    path = _write([("code", "%%writefile ngram_v2.py\nx = 1")], tmp_path / "hw.ipynb")
    folder, said = prepare(path, ngram[0].spec.files, tmp_path / "scratch2")
    assert [p.name for p in folder.iterdir()] == ["ngram_v2.py"] and len(said) == 1
    assert said[0].startswith("hw.ipynb writes none of the assignment's files (its cells write ngram_v2.py)")


# --- what a notebook may not do ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, why",
    [
        ("%%writefile /etc/cron.d/x.py", "absolute path"),
        ("%%writefile /content/ngram.py", "(write `%%writefile ngram.py`)"),
        ("%%writefile ~/ngram.py", "absolute path"),
        ("%%writefile C:/hw/ngram.py", "absolute path"),
        ("%%writefile ../escaped.py", "outside the submission folder"),
        ("%%writefile ./../escaped.py", "outside the submission folder"),
        ("%%writefile sub/ngram.py", "sub-folder"),
        ("%%writefile data.csv", "neither a file of the assignment (ngram.py) nor a helper module"),
        ("%%writefile $name.py", "neither a file of the assignment"),
        ("%%writefile {name}.py", "neither a file of the assignment"),
        ("%%writefile .hidden.py", "neither a file of the assignment"),
        ("%%writefile", "names no file"),
        ("%%writefile ngram.py other.py", "names 2 files"),
        ("%%writefile -f ngram.py", "unknown option -f"),
        ("%%writefile 'ngram.py", "cannot be read"),
        ("# FILE: ../escaped.py", "outside the submission folder"),
    ],
)
def test_a_cell_naming_a_file_outside_the_submission_is_not_graded_and_says_why(ngram, line, why):
    node = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"{line}\nx = 1")])
    written = notebook.written_files(node, ngram[0].spec.files)
    assert written.files == {}
    assert len(written.refused) == 1 and written.refused[0].startswith("cell 1") and why in written.refused[0]


def test_refused_cells_write_nothing_anywhere_and_the_rest_is_graded(ngram, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    escaped = tmp_path / "escaped.py"
    path = _write(
        [
            ("code", f"%%writefile {escaped}\nx = 1"),
            ("code", "%%writefile ../escaped.py\nx = 1"),
            ("code", "%%writefile ../../escaped.py\nx = 1"),
            ("code", "y = 2", ["file:../tagged.py"]),
            ("code", f"%%writefile ngram.py\n{REFERENCE_NGRAM}"),
        ],
        tmp_path / "upload" / "hw.ipynb",
    )
    folder, said = prepare(path, ngram[0].spec.files, scratch)
    assert sorted(p.name for p in folder.iterdir()) == ["ngram.py"]
    assert (folder / "ngram.py").read_text() == REFERENCE_NGRAM
    assert not escaped.exists() and not list(tmp_path.rglob("escaped.py")) and not list(tmp_path.rglob("tagged.py"))
    assert said[0] == "hw.ipynb: graded the files its cells write (ngram.py); no cell of it was run."
    assert [line.split(" was not graded")[0] for line in said[1:]] == [
        f"hw.ipynb, cell 1 (`%%writefile {escaped}`)",
        "hw.ipynb, cell 2 (`%%writefile ../escaped.py`)",
        "hw.ipynb, cell 3 (`%%writefile ../../escaped.py`)",
        "hw.ipynb, cell 4 (tagged `file:../tagged.py`)",
    ]


@pytest.mark.parametrize(
    "content, why",
    [
        (b"not json at all", "not a Jupyter notebook the grader can read (it is not JSON)"),
        (b"[1, 2, 3]", "not a Jupyter notebook the grader can read (it is not a JSON object)"),
        (b'{"nbformat": 99, "nbformat_minor": 0, "cells": []}', "its nbformat version is 99"),
        (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "it has no list of cells"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code"', "it ends before its JSON does"),
        (b'{"nbformat": 4, "cells": [[[' + b"[" * 100 + b"]" * 103 + b"]}", "nested deeper than 64 levels"),
        (b'{"nbformat": 4, "cells": [{"outputs": [1}]}', "a bracket closed by the other kind"),
        (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    ],
)
def test_a_malformed_notebook_gets_one_clear_line(ngram, tmp_path, content, why):
    path = tmp_path / "hw.ipynb"
    path.write_bytes(content)
    (tmp_path / "scratch").mkdir()
    folder, said = prepare(path, ngram[0].spec.files, tmp_path / "scratch")
    assert list(folder.iterdir()) == [] and len(said) == 1
    assert said[0].startswith("hw.ipynb is not a Jupyter notebook") and why in said[0] and "\n" not in said[0]


def test_a_notebook_larger_than_a_submission_may_be_is_not_read(ngram, tmp_path, monkeypatch):
    monkeypatch.setattr(notebook, "MAX_SUBMISSION_BYTES", 100)
    path = _write([("code", f"%%writefile ngram.py\n{REFERENCE_NGRAM}")], tmp_path / "hw.ipynb")
    (tmp_path / "scratch").mkdir()
    folder, said = prepare(path, ngram[0].spec.files, tmp_path / "scratch")
    assert list(folder.iterdir()) == [] and len(said) == 1 and said[0].startswith("hw.ipynb is larger than")


def test_a_folder_with_the_files_is_graded_as_files_and_two_notebooks_are_not_guessed_between(ngram, tmp_path):
    files = ngram[0].spec.files
    upload = tmp_path / "upload"
    _write([("code", "%%writefile ngram.py\nx = 1")], upload / "a.ipynb")
    (upload / "ngram.py").write_text(REFERENCE_NGRAM)  # what the cells wrote when they ran: graded as it is
    (tmp_path / "scratch").mkdir()
    assert prepare(upload, files, tmp_path / "scratch") == (upload, [])
    (upload / "ngram.py").unlink()
    _write([("code", "%%writefile ngram.py\nx = 2")], upload / "b.ipynb")
    folder, said = prepare(upload, files, tmp_path / "scratch")
    assert folder == upload
    assert said == [
        "The submission holds 2 notebooks (`a.ipynb`, `b.ipynb`) and not ngram.py: submit one notebook, or the files."
    ]


# --- read within fixed memory and time, whatever the notebook holds


def _padded(path: Path, objects: int) -> Path:
    """The reference pasted into a notebook whose one output holds `objects` empty JSON objects."""
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "a",
        "metadata": {},
        "outputs": [{"output_type": "display_data", "data": {}, "metadata": {"padding": "@"}}],
        "source": f"%%writefile ngram.py\n{REFERENCE_NGRAM}",
    }
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path.write_text(text.replace('"@"', "[" + ",".join(["{}"] * objects) + "]"))
    return path


def _peak_bytes(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_notebook_padded_past_the_bounds_is_refused_in_one_line_within_four_times_its_size(
    ngram, tmp_path, monkeypatch
):
    """Empty objects padding an output (1.4 million in 4 MiB took nbformat 743 MiB and 25 s): refused by its
    count of tokens, having held no more than about its own bytes. Here at a tenth of the bound, to be quick
    (benchmarks/notebook_bounds.py reads the 4 MiB one)."""
    monkeypatch.setattr(notebook_reader, "MAX_TOKENS", 200_000)
    path = _padded(tmp_path / "hw.ipynb", 140_000)
    (tmp_path / "scratch").mkdir()
    size = path.stat().st_size
    said = []
    peak = _peak_bytes(lambda: said.extend(prepare(path, ngram[0].spec.files, tmp_path / "scratch")[1]))
    assert len(said) == 1 and "more than 200,000 JSON values" in said[0] and "\n" not in said[0], said
    assert peak < 4 * size, (peak, size)


def test_a_notebook_padded_within_the_bounds_is_read_within_four_times_its_size(ngram, tmp_path):
    path = _padded(tmp_path / "hw.ipynb", 60_000)
    size = path.stat().st_size
    written = []
    peak = _peak_bytes(lambda: written.append(notebook.written_files(notebook.read(path), ngram[0].spec.files)))
    assert written[0].files == {"ngram.py": REFERENCE_NGRAM + ("" if REFERENCE_NGRAM.endswith("\n") else "\n")}
    assert peak < 4 * size, (peak, size)


def test_a_long_list_of_refused_cells_is_said_in_twenty_lines_and_a_count(ngram):
    cells = [{"cell_type": "code", "source": f"%%writefile /abs/x{i}.py\n"} for i in range(500)]
    written = notebook.written_files({"cells": cells}, ngram[0].spec.files)
    assert len(written.refused) == 21 and written.refused[-1].startswith("480 more cells")


# Notebooks as a hostile or careless editor may save them: any cells, sources, tags and extra values.
_texts = st.text(max_size=30) | st.sampled_from(
    ["%%writefile ngram.py\nx = 1\n", "# FILE: h.py\ny = 2", "%%file -a ngram.py\n"]
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _texts,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)
_cells = st.fixed_dictionaries(
    {},
    optional={
        "cell_type": st.sampled_from(["code", "markdown", "raw"]) | _values,
        "source": _texts | st.lists(_texts | _values, max_size=4) | _values,
        "metadata": st.fixed_dictionaries(
            {}, optional={"tags": st.lists(st.sampled_from(["file:ngram.py", "file:h.py", "x"]) | _values, max_size=3)}
        )
        | _values,
        "outputs": _values,
    },
)
_notebooks = st.fixed_dictionaries(
    {"nbformat": st.just(4), "cells": st.lists(_cells | _values, max_size=6)}, optional={"metadata": _values}
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_notebooks, st.booleans())
def test_the_bounded_reader_writes_the_files_a_whole_parse_writes(ngram, node, indented):
    """Differential: the cells the token reader gives write exactly what json.loads's whole tree writes."""
    data = json.dumps(node, indent=1 if indented else None).encode()
    files = ngram[0].spec.files
    whole = notebook.written_files(json.loads(data), files)
    streamed = notebook.written_files(notebook_reader.cells(data), files)
    assert streamed.files == whole.files and len(streamed.refused) == len(whole.refused)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_notebooks, st.data())
def test_bytes_of_any_kind_are_cells_or_one_refusal(ngram, node, data):
    """Whatever the bytes (a notebook cut, spliced or garbled), the reader gives cells or refuses; nothing else."""
    text = json.dumps(node).encode()
    cut = data.draw(st.integers(0, len(text)))
    noise = data.draw(st.binary(max_size=8))
    garbled = data.draw(st.sampled_from([text[:cut], text[:cut] + noise + text[cut:], noise + text, text[::-1]]))
    try:
        notebook_reader.check_utf8(garbled)
        notebook.written_files(notebook_reader.cells(garbled), ngram[0].spec.files)
    except (notebook_reader.NotebookRefused, UnreadableSubmission):
        pass


def test_a_version_3_notebook_writes_its_code_cells_input_as_nbformat_would_convert_it(ngram):
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "source": "%%writefile heading.py", "level": 1},
                    {"cell_type": "code", "input": ["%%writefile ngram.py\n", "x = 1"], "outputs": [], "metadata": {}},
                ]
            }
        ],
    }
    data = json.dumps(v3).encode()
    converted = nbformat.convert(nbformat.reader.reads(data.decode()), 4)
    streamed = notebook.written_files(notebook_reader.cells(data), ngram[0].spec.files)
    assert streamed.files == notebook.written_files(converted, ngram[0].spec.files).files == {"ngram.py": "x = 1\n"}
