"""The figures the docs state are checked against what lmgrade does, so none goes stale: the sizes and
counts a built zip prints, the proofs `lmgrade selftest` makes of the generated package, the limits on a
submission and on what a run prints. Each figure is read from its page, the thing it describes measured or
read from the code."""

from __future__ import annotations

import re
import zipfile

import pytest

from helpers import ROOT, TEST_SECRET, invoke
from lmgrade.sandbox import server
from lmgrade.submissions.limits import MAX_SUBMISSION_BYTES, MAX_UNPACKED_FILES

DOCS = ROOT / "docs"


def stated(page: str, pattern: str) -> re.Match:
    found = re.search(pattern, (DOCS / page).read_text(encoding="utf-8"))
    assert found, f"{page} no longer states {pattern!r}: update this test with the page"
    return found


def close(stated_value: float, measured: float, share: float) -> bool:
    return abs(stated_value - measured) <= share * measured


@pytest.mark.slow  # builds the ngram zip: some 15 s
def test_the_zip_figures_are_those_a_build_prints(tmp_path, monkeypatch):
    monkeypatch.setenv("LMGRADE_SECRET", TEST_SECRET)
    out = invoke("gradescope", "ngram", "-o", tmp_path / "autograder.zip")
    assert out.exit_code == 0, out.output
    printed = re.search(r"\((\d+) KiB\): ngram, (\d+) checks, (\d+) points", " ".join(out.output.split()))
    example = stated("gradescope-try.md", r"wrote autograder\.zip \((\d+) KiB\): ngram, (\d+) checks, (\d+) points")
    assert example.group(2, 3) == printed.group(2, 3), "the example's checks and points"
    assert close(int(example.group(1)), int(printed.group(1)), 0.15), (
        f"gradescope-try.md shows {example.group(1)} KiB; a build prints {printed.group(1)} KiB"
    )
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        (wheel,) = [i for i in zf.infolist() if i.filename.endswith(".whl")]
    about = stated("instructor-guide.md", r"lmgrade's wheel \(about ([\d.]+) MiB\)")
    assert close(float(about.group(1)), wheel.file_size / 2**20, 0.15), (
        f"instructor-guide.md says the wheel is about {about.group(1)} MiB; it is {wheel.file_size / 2**20:.2f} MiB"
    )


def test_the_selftest_example_lists_the_proofs_of_the_generated_package(tmp_path, monkeypatch):
    from test_authoring_kit import NAME, as_installed

    from lmgrade.declare.plugin_manager import make_manager
    from lmgrade.prove.selftest import plan

    block = stated("authoring-kit.md", r"```\n(ok   reference[^`]*?)\n(\w+): (\d+) proofs hold\n```")
    names = [re.match(r"ok   (.+?): ", line).group(1) for line in block.group(1).splitlines()]
    generated = tmp_path / "generated"
    assert invoke("new", NAME, "-o", generated).exit_code == 0
    as_installed(generated)
    monkeypatch.syspath_prepend(str(generated))
    steps = plan(NAME, pm=make_manager(), submissions=generated / "tests" / "submissions" / NAME)
    assert names == [step.name for step in steps] and int(block.group(3)) == len(steps)


def test_the_submission_and_output_limits_the_docs_state_are_the_codes():
    mib = MAX_SUBMISSION_BYTES // 2**20
    assert stated("sandbox.md", r"`__MACOSX`, (\d+) MiB at most").group(1) == str(mib)
    notebook = stated(
        "notebooks.md",
        r"a notebook over (\d+) MiB is\s+not read, and its cells together may write at most (\d+) MiB in at"
        r"\s+most\s+(\d+) files",
    )
    assert notebook.groups() == (str(mib), str(mib), str(MAX_UNPACKED_FILES))
    kept = stated("sandbox.md", r"keeps the first and the last (\d+) KiB")
    assert int(kept.group(1)) * 1024 == server._Output.KEEP
