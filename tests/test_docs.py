"""The contract and the command-line spec that code and docs cite are in the repo, unchanged."""

from __future__ import annotations

import pytest

from helpers import ROOT

SHARED = ROOT.parent / "shared" / "spec"


@pytest.mark.parametrize("name", ["student-api.md", "cli.md"])
def test_spec_copy_is_identical_to_the_course_spec(name):
    ours = ROOT / "docs" / "spec" / name
    assert ours.is_file(), f"docs/spec/{name} is missing"
    if not (SHARED / name).is_file():
        pytest.skip("the course's shared spec folder is not beside this checkout")
    assert ours.read_bytes() == (SHARED / name).read_bytes(), f"docs/spec/{name} differs from the course spec"
