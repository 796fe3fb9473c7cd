"""The built-in `rnn` assignment (the Elman RNN): where its parts are, for the harness."""

from lmgrade import AssignmentPlugin

plugin = AssignmentPlugin(
    "rnn",
    package=__name__,
    folder="lmgrade.assignments.rnn",
    reference="lmgrade.reference.rnn",
    checks=".checks:rnn_checks",
    bugs=".bugs:BUGS",
)
