"""The `tiny` assignment: where its parts are, for lmgrade."""

from pathlib import Path

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "tiny",
    package=__name__,
    folder=Path(__file__).with_name("tiny"),  # assignment.toml and the templates
    reference="tinylm.reference",                   # one module per submitted file: stats.py
    checks=".checks:tiny_checks",                   # imported when lmgrade first asks
    bugs=".bugs:BUGS",
)
