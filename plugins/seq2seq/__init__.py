"""The built-in `seq2seq` assignment: where its parts are, for the harness."""

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "seq2seq",
    package=__name__,
    folder="lmgrade.assignments.seq2seq",
    reference="lmgrade.reference.seq2seq",
    checks=".checks:seq2seq_checks",
    bugs=".bugs:BUGS",
)
